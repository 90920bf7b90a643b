// mapShared(fd, offset, length): a SharedArrayBuffer over `length` bytes of an open file from
// `offset`, mapped private and copy-on-write, unmapped once no thread holds it any more.
//
// Why: a prepared file read into new SharedArrayBuffers costs a page fault on fresh memory for
// every 4 KiB; mapped, its pages are the page cache's own. Node-API makes no SharedArrayBuffer
// over outside memory, V8's API does (SharedArrayBuffer::NewBackingStore), hence V8 directly.
#include <node.h>
#include <v8.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

using namespace v8;

namespace {

struct Mapping {
  void* base;
  size_t length;
};

// Called by V8 on whichever thread drops the last reference.
void Unmap(void*, size_t, void* deleter_data) {
  auto* mapping = static_cast<Mapping*>(deleter_data);
  munmap(mapping->base, mapping->length);
  delete mapping;
}

void Throw(Isolate* isolate, const std::string& message) {
  isolate->ThrowException(Exception::Error(String::NewFromUtf8(isolate, message.c_str()).ToLocalChecked()));
}

void MapShared(const FunctionCallbackInfo<Value>& args) {
  Isolate* isolate = args.GetIsolate();
  if (args.Length() != 3 || !args[0]->IsInt32() || !args[1]->IsNumber() || !args[2]->IsNumber()) {
    Throw(isolate, "mapShared(fd, offset, length): an integer descriptor and two byte counts");
    return;
  }
  Local<Context> context = isolate->GetCurrentContext();
  int fd = args[0]->Int32Value(context).FromJust();
  double offset = args[1]->NumberValue(context).FromJust();
  double length = args[2]->NumberValue(context).FromJust();
  if (!(offset >= 0) || !(length >= 0) || offset > 9007199254740991.0 || length > 9007199254740991.0) {
    Throw(isolate, "mapShared: offset and length must be non-negative byte counts");
    return;
  }
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  size_t at = static_cast<size_t>(offset);
  size_t bytes = static_cast<size_t>(length);
  size_t start = at - at % page;
  // mmap refuses an empty mapping: an empty array still maps one byte's page.
  size_t span = bytes + (at - start) > 0 ? bytes + (at - start) : 1;
  void* base = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, static_cast<off_t>(start));
  if (base == MAP_FAILED) {
    Throw(isolate, std::string("mmap: ") + strerror(errno));
    return;
  }
  auto* mapping = new Mapping{base, span};
  std::shared_ptr<BackingStore> store =
      SharedArrayBuffer::NewBackingStore(static_cast<char*>(base) + (at - start), bytes, Unmap, mapping);
  args.GetReturnValue().Set(SharedArrayBuffer::New(isolate, std::move(store)));
}

}  // namespace

NODE_MODULE_INIT() {
  Isolate* isolate = context->GetIsolate();
  exports
      ->Set(context, String::NewFromUtf8(isolate, "mapShared").ToLocalChecked(),
            FunctionTemplate::New(isolate, MapShared)->GetFunction(context).ToLocalChecked())
      .FromJust();
}
