// mapShared(fd, offset, length): a SharedArrayBuffer over `length` bytes of an open file from
// `offset`, mapped private and copy-on-write, unmapped once no thread holds it any more.
// dropPages(buffer): such a buffer's pages let go of meanwhile (below).
// hugeShared(length): a zeroed SharedArrayBuffer on anonymous memory backed by huge pages (below).
//
// Why: a prepared file read into new SharedArrayBuffers costs a page fault on fresh memory for
// every 4 KiB; mapped, its pages are the page cache's own. Node-API makes no SharedArrayBuffer
// over outside memory, V8's API does (SharedArrayBuffer::NewBackingStore), hence V8 directly.
#include <node.h>
#include <v8.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

using namespace v8;

namespace {

struct Mapping {
  void* base;
  size_t length;
};

// The live mappings by base address, for dropPages: shared by every thread of the process.
std::mutex live_mutex;
std::map<uintptr_t, size_t> live;

// Called by V8 on whichever thread drops the last reference.
void Unmap(void*, size_t, void* deleter_data) {
  auto* mapping = static_cast<Mapping*>(deleter_data);
  {
    std::lock_guard<std::mutex> lock(live_mutex);
    live.erase(reinterpret_cast<uintptr_t>(mapping->base));
    munmap(mapping->base, mapping->length);
  }
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
  {
    std::lock_guard<std::mutex> lock(live_mutex);
    live[reinterpret_cast<uintptr_t>(base)] = span;
  }
  std::shared_ptr<BackingStore> store =
      SharedArrayBuffer::NewBackingStore(static_cast<char*>(base) + (at - start), bytes, Unmap, mapping);
  args.GetReturnValue().Set(SharedArrayBuffer::New(isolate, std::move(store)));
}

// dropPages(buffer): takes the pages of a buffer made by mapShared out of this process's memory
// (madvise MADV_DONTNEED) while the mapping stays: a later read faults them back in from the file,
// unchanged as long as nothing wrote to them. Returns false, doing nothing, for any other buffer,
// whose memory the same call would zero.
void DropPages(const FunctionCallbackInfo<Value>& args) {
  Isolate* isolate = args.GetIsolate();
  if (args.Length() != 1 || !args[0]->IsSharedArrayBuffer()) {
    Throw(isolate, "dropPages(buffer): a SharedArrayBuffer");
    return;
  }
  std::shared_ptr<BackingStore> store = args[0].As<SharedArrayBuffer>()->GetBackingStore();
  uintptr_t data = reinterpret_cast<uintptr_t>(store->Data());
  std::lock_guard<std::mutex> lock(live_mutex);
  auto it = live.upper_bound(data);
  if (it == live.begin()) {
    args.GetReturnValue().Set(false);
    return;
  }
  --it;
  uintptr_t base = it->first;
  size_t span = it->second;
  if (data < base || data + store->ByteLength() > base + span) {
    args.GetReturnValue().Set(false);
    return;
  }
  // The whole mapping: its pages are whole, and the buffer is all of it but the head of its first page.
  int done = madvise(reinterpret_cast<void*>(base), span, MADV_DONTNEED);
  args.GetReturnValue().Set(done == 0);
}

// hugeShared(length): `length` zeroed bytes of fresh anonymous memory from a 2 MiB boundary, which
// the kernel is asked to back with transparent huge pages (madvise MADV_HUGEPAGE) before anything
// touches it. A store's columns are read at random rows (the key orders, best-first's blocks, the
// summaries): with 4 KiB pages nearly every such read of a large column also misses the TLB. Where
// huge pages are off the call changes nothing and the memory is plain.
struct Anonymous {
  void* base;
  size_t length;
};

void UnmapAnonymous(void*, size_t, void* deleter_data) {
  auto* a = static_cast<Anonymous*>(deleter_data);
  munmap(a->base, a->length);
  delete a;
}

void HugeShared(const FunctionCallbackInfo<Value>& args) {
  Isolate* isolate = args.GetIsolate();
  if (args.Length() != 1 || !args[0]->IsNumber()) {
    Throw(isolate, "hugeShared(length): a byte count");
    return;
  }
  double length = args[0]->NumberValue(isolate->GetCurrentContext()).FromJust();
  if (!(length >= 0) || length > 9007199254740991.0) {
    Throw(isolate, "hugeShared: length must be a non-negative byte count");
    return;
  }
  const size_t huge = size_t{2} << 20;
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  size_t bytes = static_cast<size_t>(length);
  size_t body = bytes == 0 ? page : (bytes + page - 1) / page * page;
  // Room to start on a 2 MiB boundary; what lies before it and after the body is given back.
  size_t span = body + huge;
  void* raw = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) {
    Throw(isolate, std::string("mmap: ") + strerror(errno));
    return;
  }
  uintptr_t start = (reinterpret_cast<uintptr_t>(raw) + huge - 1) & ~(huge - 1);
  size_t head = start - reinterpret_cast<uintptr_t>(raw);
  if (head > 0) munmap(raw, head);
  if (span - head - body > 0) munmap(reinterpret_cast<void*>(start + body), span - head - body);
  madvise(reinterpret_cast<void*>(start), body, MADV_HUGEPAGE);
  auto* a = new Anonymous{reinterpret_cast<void*>(start), body};
  std::shared_ptr<BackingStore> store = SharedArrayBuffer::NewBackingStore(a->base, bytes, UnmapAnonymous, a);
  args.GetReturnValue().Set(SharedArrayBuffer::New(isolate, std::move(store)));
}

}  // namespace

NODE_MODULE_INIT() {
  Isolate* isolate = context->GetIsolate();
  exports
      ->Set(context, String::NewFromUtf8(isolate, "mapShared").ToLocalChecked(),
            FunctionTemplate::New(isolate, MapShared)->GetFunction(context).ToLocalChecked())
      .FromJust();
  exports
      ->Set(context, String::NewFromUtf8(isolate, "dropPages").ToLocalChecked(),
            FunctionTemplate::New(isolate, DropPages)->GetFunction(context).ToLocalChecked())
      .FromJust();
  exports
      ->Set(context, String::NewFromUtf8(isolate, "hugeShared").ToLocalChecked(),
            FunctionTemplate::New(isolate, HugeShared)->GetFunction(context).ToLocalChecked())
      .FromJust();
}
