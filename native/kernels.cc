// The scan's filter and sort-key loops (src/query/kernels.ts, sort-keys.ts) and a deep page's
// buffer (its appends and selection, topk.ts), over typed arrays: the same loops as the
// JavaScript ones, which they replace where this addon loads.
//
// Why: V8 keeps a bounds check and a conversion on every typed-array access in these loops;
// compiled here they run 2-5x faster (a code filter over 630,000 rows 1.15 -> 0.24 ms, a
// Float64 range 0.78 -> 0.43 ms), and a call costs ~20 ns, a small share of a chunk's rows.
//
// Every call checks its arrays' types and lengths and throws a TypeError or RangeError rather
// than read or write outside them: a bad call is a bug to report, never memory to corrupt.
#include <node.h>
#include <v8.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define EDIFICE_AVX2 1
#endif

using namespace v8;

namespace {

template <typename T>
struct Span {
  T* data;
  size_t length;
};

template <typename T>
Span<T> SpanOf(Local<Value> value) {
  Local<ArrayBufferView> view = value.As<ArrayBufferView>();
  // Buffer()->Data() serves ArrayBuffers and SharedArrayBuffers alike, without the reference
  // count GetBackingStore() would take on every call.
  char* base = static_cast<char*>(view->Buffer()->Data());
  return {reinterpret_cast<T*>(base + view->ByteOffset()), view->ByteLength() / sizeof(T)};
}

bool Fail(const FunctionCallbackInfo<Value>& args, const char* message, bool range = false) {
  Isolate* isolate = args.GetIsolate();
  Local<String> text = String::NewFromUtf8(isolate, message).ToLocalChecked();
  isolate->ThrowException(range ? Exception::RangeError(text) : Exception::TypeError(text));
  return false;
}

// An argument that must be a whole number in [0, 2^32).
bool Index(const FunctionCallbackInfo<Value>& args, int i, uint32_t* out) {
  if (!args[i]->IsUint32()) return Fail(args, "kernels: row numbers and counts are whole numbers from 0 to 2^32 - 1");
  *out = args[i].As<Uint32>()->Value();
  return true;
}

bool NumberArg(const FunctionCallbackInfo<Value>& args, int i, double* out) {
  if (!args[i]->IsNumber()) return Fail(args, "kernels: bounds and thresholds are numbers");
  *out = args[i].As<Number>()->Value();
  return true;
}

bool Selection(const FunctionCallbackInfo<Value>& args, int i, Span<uint32_t>* out) {
  if (!args[i]->IsUint32Array()) return Fail(args, "kernels: a selection is a Uint32Array");
  *out = SpanOf<uint32_t>(args[i]);
  return true;
}

// Ranks (a Uint32Array) at i and a rank bound at i + 1. Ranks are below 2^32: a bound of 2^32 or
// more lets every tie in.
bool Ranks(const FunctionCallbackInfo<Value>& args, int i, Span<uint32_t>* rank, uint64_t* rankBound) {
  double rb;
  if (!args[i]->IsUint32Array()) return Fail(args, "kernels: ranks are a Uint32Array");
  if (!NumberArg(args, i + 1, &rb)) return false;
  *rank = SpanOf<uint32_t>(args[i]);
  *rankBound = !(rb > 0) ? 0 : rb >= 4294967296.0 ? 4294967296ull : static_cast<uint64_t>(std::ceil(rb));
  return true;
}

// [a, b) within the column, and a selection with room for at + (b - a) rows from `at` on.
bool RunFits(const FunctionCallbackInfo<Value>& args, size_t length, uint32_t a, uint32_t b, const Span<uint32_t>& sel, uint32_t at) {
  if (a > b || b > length) return Fail(args, "kernels: the rows [a, b) must lie within the column", true);
  if (static_cast<uint64_t>(at) + (b - a) > sel.length) return Fail(args, "kernels: the selection has no room for the rows", true);
  return true;
}

// Integer bounds of an integer column from numeric ones (whole numbers or infinities, as
// lowerCode and upperCode give them); false when no value of T lies within.
template <typename T>
bool IntBounds(double lo, double hi, T* ilo, T* ihi) {
  constexpr double kMin = static_cast<double>(std::numeric_limits<T>::min());
  constexpr double kMax = static_cast<double>(std::numeric_limits<T>::max());
  lo = std::ceil(lo);
  hi = std::floor(hi);
  if (!(lo <= hi) || lo > kMax || hi < kMin) return false;
  *ilo = static_cast<T>(lo < kMin ? kMin : lo);
  *ihi = static_cast<T>(hi > kMax ? kMax : hi);
  return true;
}

template <typename T, typename B>
uint32_t RangeLoop(const T* col, B lo, B hi, uint32_t a, uint32_t b, uint32_t* sel, uint32_t k) {
  for (uint32_t r = a; r < b; r++) {
    const T v = col[r];
    sel[k] = r;
    k += static_cast<uint32_t>(v >= lo) & static_cast<uint32_t>(v <= hi);
  }
  return k;
}

uint32_t FlagsLoop(const uint32_t* flags, uint32_t mask, uint32_t want, uint32_t a, uint32_t b, uint32_t* sel, uint32_t k) {
  for (uint32_t r = a; r < b; r++) {
    sel[k] = r;
    k += static_cast<uint32_t>((flags[r] & mask) == want);
  }
  return k;
}

#ifdef EDIFICE_AVX2
// The first pass over a run tests 8 rows at once where the CPU has AVX2 (checked when the addon
// loads; the scalar loops serve elsewhere), which spend a store and a dependent add on every
// row. The numbers of the rows that pass are packed to the front of a vector (kPack[bits] lists
// the lanes of the bits set) and stored whole at sel[k]: the lanes past the last that passes
// land where later rows go, within the room RunFits asks for (at + (b - a)).
struct PackTable {
  uint8_t lanes[256][8];
  constexpr PackTable() : lanes() {
    for (int m = 0; m < 256; m++) {
      int n = 0;
      for (int j = 0; j < 8; j++)
        if (m >> j & 1) lanes[m][n++] = static_cast<uint8_t>(j);
    }
  }
};
constexpr PackTable kPack;

const bool kAvx2 = [] {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt");
}();

// Writes the rows of `rows` whose bit is set in `bits` at sel[k], in order; returns the new k.
__attribute__((target("avx2,popcnt"))) inline uint32_t Pack(__m256i rows, unsigned bits, uint32_t* sel, uint32_t k) {
  const __m256i lanes = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(kPack.lanes[bits])));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(sel + k), _mm256_permutevar8x32_epi32(rows, lanes));
  return k + static_cast<uint32_t>(_mm_popcnt_u32(bits));
}

__attribute__((target("avx2,popcnt"))) inline __m256i FirstRows(uint32_t a) {
  return _mm256_add_epi32(_mm256_set1_epi32(static_cast<int>(a)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

__attribute__((target("avx2,popcnt"))) uint32_t FlagsLoopAvx2(const uint32_t* flags, uint32_t mask, uint32_t want, uint32_t a, uint32_t b,
                                                              uint32_t* sel, uint32_t k) {
  const __m256i vmask = _mm256_set1_epi32(static_cast<int>(mask)), vwant = _mm256_set1_epi32(static_cast<int>(want));
  const __m256i eight = _mm256_set1_epi32(8);
  __m256i rows = FirstRows(a);
  uint32_t r = a;
  for (; b - r >= 8; r += 8) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(flags + r));
    const __m256i pass = _mm256_cmpeq_epi32(_mm256_and_si256(v, vmask), vwant);
    k = Pack(rows, static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(pass))), sel, k);
    rows = _mm256_add_epi32(rows, eight);
  }
  return FlagsLoop(flags, mask, want, r, b, sel, k);
}

// NaN fails both ordered comparisons, as it fails the scalar loop's.
__attribute__((target("avx2,popcnt"))) uint32_t RangeLoopAvx2(const double* col, double lo, double hi, uint32_t a, uint32_t b, uint32_t* sel,
                                                              uint32_t k) {
  const __m256d vlo = _mm256_set1_pd(lo), vhi = _mm256_set1_pd(hi);
  const __m256i eight = _mm256_set1_epi32(8);
  __m256i rows = FirstRows(a);
  uint32_t r = a;
  for (; b - r >= 8; r += 8) {
    const __m256d x0 = _mm256_loadu_pd(col + r), x1 = _mm256_loadu_pd(col + r + 4);
    const int m0 = _mm256_movemask_pd(_mm256_and_pd(_mm256_cmp_pd(x0, vlo, _CMP_GE_OQ), _mm256_cmp_pd(x0, vhi, _CMP_LE_OQ)));
    const int m1 = _mm256_movemask_pd(_mm256_and_pd(_mm256_cmp_pd(x1, vlo, _CMP_GE_OQ), _mm256_cmp_pd(x1, vhi, _CMP_LE_OQ)));
    k = Pack(rows, static_cast<unsigned>(m0 | m1 << 4), sel, k);
    rows = _mm256_add_epi32(rows, eight);
  }
  return RangeLoop(col, lo, hi, r, b, sel, k);
}

// Integer columns widened to 32 bits: a row passes unless lo > v or v > hi.
template <typename T>
__attribute__((target("avx2,popcnt"))) inline __m256i Widen(const T* p);
template <>
__attribute__((target("avx2,popcnt"))) inline __m256i Widen<int32_t>(const int32_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}
template <>
__attribute__((target("avx2,popcnt"))) inline __m256i Widen<int16_t>(const int16_t* p) {
  return _mm256_cvtepi16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

template <typename T>
__attribute__((target("avx2,popcnt"))) uint32_t RangeLoopAvx2(const T* col, T lo, T hi, uint32_t a, uint32_t b, uint32_t* sel, uint32_t k) {
  const __m256i vlo = _mm256_set1_epi32(lo), vhi = _mm256_set1_epi32(hi);
  const __m256i eight = _mm256_set1_epi32(8);
  __m256i rows = FirstRows(a);
  uint32_t r = a;
  for (; b - r >= 8; r += 8) {
    const __m256i v = Widen<T>(col + r);
    const __m256i fail = _mm256_or_si256(_mm256_cmpgt_epi32(vlo, v), _mm256_cmpgt_epi32(v, vhi));
    k = Pack(rows, ~static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(fail))) & 0xffu, sel, k);
    rows = _mm256_add_epi32(rows, eight);
  }
  return RangeLoop(col, lo, hi, r, b, sel, k);
}

// Where the CPU has AVX-512, the same first passes take 16 rows at a time, and the rows that
// pass are packed by the compress instruction into a register (storing them straight to memory
// is slower on data in cache, and microcoded on some CPUs), then stored whole at sel[k], as Pack.
const bool kAvx512 = [] {
  __builtin_cpu_init();
  return kAvx2 && __builtin_cpu_supports("avx512f");
}();

__attribute__((target("avx512f,popcnt"))) inline uint32_t Pack16(__m512i rows, __mmask16 bits, uint32_t* sel, uint32_t k) {
  _mm512_storeu_si512(sel + k, _mm512_maskz_compress_epi32(bits, rows));
  return k + static_cast<uint32_t>(_mm_popcnt_u32(bits));
}

__attribute__((target("avx512f,popcnt"))) inline __m512i FirstRows16(uint32_t a) {
  return _mm512_add_epi32(_mm512_set1_epi32(static_cast<int>(a)), _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
}

__attribute__((target("avx512f,popcnt"))) uint32_t FlagsLoopAvx512(const uint32_t* flags, uint32_t mask, uint32_t want, uint32_t a, uint32_t b,
                                                                  uint32_t* sel, uint32_t k) {
  const __m512i vmask = _mm512_set1_epi32(static_cast<int>(mask)), vwant = _mm512_set1_epi32(static_cast<int>(want));
  const __m512i sixteen = _mm512_set1_epi32(16);
  __m512i rows = FirstRows16(a);
  uint32_t r = a;
  for (; b - r >= 16; r += 16) {
    const __m512i v = _mm512_loadu_si512(flags + r);
    k = Pack16(rows, _mm512_cmpeq_epi32_mask(_mm512_and_si512(v, vmask), vwant), sel, k);
    rows = _mm512_add_epi32(rows, sixteen);
  }
  return FlagsLoop(flags, mask, want, r, b, sel, k);
}

__attribute__((target("avx512f,popcnt"))) uint32_t RangeLoopAvx512(const double* col, double lo, double hi, uint32_t a, uint32_t b, uint32_t* sel,
                                                                  uint32_t k) {
  const __m512d vlo = _mm512_set1_pd(lo), vhi = _mm512_set1_pd(hi);
  const __m512i sixteen = _mm512_set1_epi32(16);
  __m512i rows = FirstRows16(a);
  uint32_t r = a;
  for (; b - r >= 16; r += 16) {
    const __m512d x0 = _mm512_loadu_pd(col + r), x1 = _mm512_loadu_pd(col + r + 8);
    const unsigned m0 = _mm512_cmp_pd_mask(x0, vlo, _CMP_GE_OQ) & _mm512_cmp_pd_mask(x0, vhi, _CMP_LE_OQ);
    const unsigned m1 = _mm512_cmp_pd_mask(x1, vlo, _CMP_GE_OQ) & _mm512_cmp_pd_mask(x1, vhi, _CMP_LE_OQ);
    k = Pack16(rows, static_cast<__mmask16>(m0 | m1 << 8), sel, k);
    rows = _mm512_add_epi32(rows, sixteen);
  }
  return RangeLoop(col, lo, hi, r, b, sel, k);
}

template <typename T>
__attribute__((target("avx512f,popcnt"))) inline __m512i Widen16(const T* p);
template <>
__attribute__((target("avx512f,popcnt"))) inline __m512i Widen16<int32_t>(const int32_t* p) {
  return _mm512_loadu_si512(p);
}
template <>
__attribute__((target("avx512f,popcnt"))) inline __m512i Widen16<int16_t>(const int16_t* p) {
  return _mm512_cvtepi16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

template <typename T>
__attribute__((target("avx512f,popcnt"))) uint32_t RangeLoopAvx512(const T* col, T lo, T hi, uint32_t a, uint32_t b, uint32_t* sel, uint32_t k) {
  const __m512i vlo = _mm512_set1_epi32(lo), vhi = _mm512_set1_epi32(hi);
  const __m512i sixteen = _mm512_set1_epi32(16);
  __m512i rows = FirstRows16(a);
  uint32_t r = a;
  for (; b - r >= 16; r += 16) {
    const __m512i v = Widen16<T>(col + r);
    k = Pack16(rows, _mm512_cmpge_epi32_mask(v, vlo) & _mm512_cmple_epi32_mask(v, vhi), sel, k);
    rows = _mm512_add_epi32(rows, sixteen);
  }
  return RangeLoop(col, lo, hi, r, b, sel, k);
}
#endif

// The first pass of a range over [a, b), by 8 or 16 rows at once where the CPU allows.
template <typename T>
uint32_t RangeRun(const T* col, T lo, T hi, uint32_t a, uint32_t b, uint32_t* sel, uint32_t k) {
#ifdef EDIFICE_AVX2
  if (kAvx512) return RangeLoopAvx512(col, lo, hi, a, b, sel, k);
  if (kAvx2) return RangeLoopAvx2(col, lo, hi, a, b, sel, k);
#endif
  return RangeLoop(col, lo, hi, a, b, sel, k);
}

uint32_t FlagsRun(const uint32_t* flags, uint32_t mask, uint32_t want, uint32_t a, uint32_t b, uint32_t* sel, uint32_t k) {
#ifdef EDIFICE_AVX2
  if (kAvx512) return FlagsLoopAvx512(flags, mask, want, a, b, sel, k);
  if (kAvx2) return FlagsLoopAvx2(flags, mask, want, a, b, sel, k);
#endif
  return FlagsLoop(flags, mask, want, a, b, sel, k);
}

// Keeps the rows of sel[i..n) with lo <= col[r] <= hi, written from sel[k] on (k <= i); the last k.
template <typename T, typename B>
uint32_t RefineLoop(const T* col, size_t length, B lo, B hi, uint32_t* sel, uint32_t i, uint32_t n, uint32_t k) {
  for (; i < n; i++) {
    const uint32_t r = sel[i];
    if (r >= length) continue;
    const T v = col[r];
    sel[k] = r;
    k += static_cast<uint32_t>(v >= lo) & static_cast<uint32_t>(v <= hi);
  }
  return k;
}

#ifdef EDIFICE_AVX2
// A refine's 8 rows' values gathered at once and tested: the bits of the rows that pass. A
// 16-bit value is gathered as the 32 bits from its own (the next row's value in the high half),
// so the last row of the column is never gathered (GatherRows).
__attribute__((target("avx2,popcnt"))) inline unsigned RefineTest(const double* col, __m256i rows, double lo, double hi) {
  const __m256d vlo = _mm256_set1_pd(lo), vhi = _mm256_set1_pd(hi);
  const __m256d x0 = _mm256_i32gather_pd(col, _mm256_castsi256_si128(rows), 8);
  const __m256d x1 = _mm256_i32gather_pd(col, _mm256_extracti128_si256(rows, 1), 8);
  const int m0 = _mm256_movemask_pd(_mm256_and_pd(_mm256_cmp_pd(x0, vlo, _CMP_GE_OQ), _mm256_cmp_pd(x0, vhi, _CMP_LE_OQ)));
  const int m1 = _mm256_movemask_pd(_mm256_and_pd(_mm256_cmp_pd(x1, vlo, _CMP_GE_OQ), _mm256_cmp_pd(x1, vhi, _CMP_LE_OQ)));
  return static_cast<unsigned>(m0 | m1 << 4);
}
__attribute__((target("avx2,popcnt"))) inline unsigned IntRefineTest(__m256i v, int32_t lo, int32_t hi) {
  const __m256i fail = _mm256_or_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32(lo), v), _mm256_cmpgt_epi32(v, _mm256_set1_epi32(hi)));
  return ~static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(fail))) & 0xffu;
}
__attribute__((target("avx2,popcnt"))) inline unsigned RefineTest(const int32_t* col, __m256i rows, int32_t lo, int32_t hi) {
  return IntRefineTest(_mm256_i32gather_epi32(reinterpret_cast<const int*>(col), rows, 4), lo, hi);
}
__attribute__((target("avx2,popcnt"))) inline unsigned RefineTest(const int16_t* col, __m256i rows, int16_t lo, int16_t hi) {
  const __m256i pairs = _mm256_i32gather_epi32(reinterpret_cast<const int*>(col), rows, 2);
  return IntRefineTest(_mm256_srai_epi32(_mm256_slli_epi32(pairs, 16), 16), lo, hi);
}

// Rows below this can be gathered from a column of `length` values of T.
template <typename T>
inline size_t GatherRows(size_t length) {
  return sizeof(T) == 2 && length > 0 ? length - 1 : length;
}

// A refine asks for the rows kRefineAhead places ahead of those it gathers. The hardware
// prefetchers cannot follow a list of row numbers, and a chunk's rows lie on pages its first
// step read only part of: a gather from memory waits on 8 misses at once.
constexpr uint32_t kRefineAhead = 32;

// RefineLoop over 8 rows at once: their values gathered and tested, the rows that pass packed
// down to sel[k] (Pack; k <= i, so it overwrites rows already read). A group holding a row that
// cannot be gathered goes through the scalar loop. A prefetch never faults, so rows past the
// column are asked for too.
template <typename T, typename B>
__attribute__((target("avx2,popcnt"))) uint32_t RefineLoopAvx2(const T* col, size_t length, B lo, B hi, uint32_t* sel, uint32_t n) {
  const size_t rows = GatherRows<T>(length);
  if (rows == 0 || rows > static_cast<size_t>(std::numeric_limits<int32_t>::max())) return RefineLoop(col, length, lo, hi, sel, 0, n, 0);
  const __m256i last = _mm256_set1_epi32(static_cast<int>(rows - 1));
  uint32_t k = 0, i = 0;
  for (; n - i >= 8; i += 8) {
    if (n - i >= kRefineAhead + 8)
      for (uint32_t j = i + kRefineAhead; j < i + kRefineAhead + 8; j++) _mm_prefetch(reinterpret_cast<const char*>(col + sel[j]), _MM_HINT_T0);
    const __m256i r = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(sel + i));
    const __m256i within = _mm256_cmpeq_epi32(_mm256_min_epu32(r, last), r);
    if (_mm256_movemask_ps(_mm256_castsi256_ps(within)) != 0xff)
      k = RefineLoop(col, length, lo, hi, sel, i, i + 8, k);
    else
      k = Pack(r, RefineTest(col, r, lo, hi), sel, k);
  }
  return RefineLoop(col, length, lo, hi, sel, i, n, k);
}
#endif

template <typename T, typename B>
uint32_t RefineRun(const T* col, size_t length, B lo, B hi, uint32_t* sel, uint32_t n) {
#ifdef EDIFICE_AVX2
  if (kAvx2) return RefineLoopAvx2(col, length, lo, hi, sel, n);
#endif
  return RefineLoop(col, length, lo, hi, sel, 0, n, 0);
}

// range(col, lo, hi, a, b, sel, at): rows of [a, b) with lo <= col[r] <= hi written to sel from
// sel[at] on; returns at + their count. col: Float64Array (NaN fails), Int32Array or Int16Array.
void Range(const FunctionCallbackInfo<Value>& args) {
  double lo, hi;
  uint32_t a, b, at;
  Span<uint32_t> sel;
  if (!NumberArg(args, 1, &lo) || !NumberArg(args, 2, &hi) || !Index(args, 3, &a) || !Index(args, 4, &b) || !Selection(args, 5, &sel) ||
      !Index(args, 6, &at))
    return;
  Local<Value> c = args[0];
  uint32_t k = at;
  if (c->IsFloat64Array()) {
    Span<double> col = SpanOf<double>(c);
    if (!RunFits(args, col.length, a, b, sel, at)) return;
    k = RangeRun(col.data, lo, hi, a, b, sel.data, at);
  } else if (c->IsInt32Array()) {
    Span<int32_t> col = SpanOf<int32_t>(c);
    if (!RunFits(args, col.length, a, b, sel, at)) return;
    int32_t ilo, ihi;
    if (IntBounds(lo, hi, &ilo, &ihi)) k = RangeRun(col.data, ilo, ihi, a, b, sel.data, at);
  } else if (c->IsInt16Array()) {
    Span<int16_t> col = SpanOf<int16_t>(c);
    if (!RunFits(args, col.length, a, b, sel, at)) return;
    int16_t ilo, ihi;
    if (IntBounds(lo, hi, &ilo, &ihi)) k = RangeRun(col.data, ilo, ihi, a, b, sel.data, at);
  } else {
    Fail(args, "kernels: range reads a Float64Array, an Int32Array or an Int16Array");
    return;
  }
  args.GetReturnValue().Set(k);
}

// refine(col, lo, hi, sel, n): keeps the rows of sel[0..n) with lo <= col[r] <= hi, in order;
// returns their count.
void Refine(const FunctionCallbackInfo<Value>& args) {
  double lo, hi;
  uint32_t n;
  Span<uint32_t> sel;
  if (!NumberArg(args, 1, &lo) || !NumberArg(args, 2, &hi) || !Selection(args, 3, &sel) || !Index(args, 4, &n)) return;
  if (n > sel.length) {
    Fail(args, "kernels: n exceeds the selection", true);
    return;
  }
  Local<Value> c = args[0];
  uint32_t k = 0;
  if (c->IsFloat64Array()) {
    Span<double> col = SpanOf<double>(c);
    k = RefineRun(col.data, col.length, lo, hi, sel.data, n);
  } else if (c->IsInt32Array()) {
    Span<int32_t> col = SpanOf<int32_t>(c);
    int32_t ilo, ihi;
    if (IntBounds(lo, hi, &ilo, &ihi)) k = RefineRun(col.data, col.length, ilo, ihi, sel.data, n);
  } else if (c->IsInt16Array()) {
    Span<int16_t> col = SpanOf<int16_t>(c);
    int16_t ilo, ihi;
    if (IntBounds(lo, hi, &ilo, &ihi)) k = RefineRun(col.data, col.length, ilo, ihi, sel.data, n);
  } else {
    Fail(args, "kernels: refine reads a Float64Array, an Int32Array or an Int16Array");
    return;
  }
  args.GetReturnValue().Set(k);
}

// A code column (Uint8Array, Uint16Array or Uint32Array) and its 256-entry table of 0s and 1s:
// codes past the table fail, as the JavaScript loop's undefined entries would never be read
// (tables cover every code of their column).
template <typename T>
uint32_t CodesRangeLoop(const T* col, const uint8_t* table, size_t tableLength, uint32_t a, uint32_t b, uint32_t* sel, uint32_t k) {
  for (uint32_t r = a; r < b; r++) {
    const T v = col[r];
    sel[k] = r;
    k += v < tableLength ? table[v] : 0;
  }
  return k;
}

template <typename T>
uint32_t CodesRefineLoop(const T* col, size_t length, const uint8_t* table, size_t tableLength, uint32_t* sel, uint32_t n) {
  uint32_t k = 0;
  for (uint32_t i = 0; i < n; i++) {
    const uint32_t r = sel[i];
    if (r >= length) continue;
    const T v = col[r];
    sel[k] = r;
    k += v < tableLength ? table[v] : 0;
  }
  return k;
}

bool Table(const FunctionCallbackInfo<Value>& args, int i, Span<uint8_t>* out) {
  if (!args[i]->IsUint8Array()) return Fail(args, "kernels: a code table is a Uint8Array");
  *out = SpanOf<uint8_t>(args[i]);
  return true;
}

// codesRange(col, table, a, b, sel, at): rows of [a, b) whose code's entry is 1.
void CodesRange(const FunctionCallbackInfo<Value>& args) {
  Span<uint8_t> table;
  uint32_t a, b, at;
  Span<uint32_t> sel;
  if (!Table(args, 1, &table) || !Index(args, 2, &a) || !Index(args, 3, &b) || !Selection(args, 4, &sel) || !Index(args, 5, &at)) return;
  Local<Value> c = args[0];
  uint32_t k;
  if (c->IsUint8Array()) {
    Span<uint8_t> col = SpanOf<uint8_t>(c);
    if (!RunFits(args, col.length, a, b, sel, at)) return;
    k = CodesRangeLoop(col.data, table.data, table.length, a, b, sel.data, at);
  } else if (c->IsUint16Array()) {
    Span<uint16_t> col = SpanOf<uint16_t>(c);
    if (!RunFits(args, col.length, a, b, sel, at)) return;
    k = CodesRangeLoop(col.data, table.data, table.length, a, b, sel.data, at);
  } else if (c->IsUint32Array()) {
    Span<uint32_t> col = SpanOf<uint32_t>(c);
    if (!RunFits(args, col.length, a, b, sel, at)) return;
    k = CodesRangeLoop(col.data, table.data, table.length, a, b, sel.data, at);
  } else {
    Fail(args, "kernels: codes are a Uint8Array, a Uint16Array or a Uint32Array");
    return;
  }
  args.GetReturnValue().Set(k);
}

// codesRefine(col, table, sel, n): keeps the rows of sel[0..n) whose code's entry is 1.
void CodesRefine(const FunctionCallbackInfo<Value>& args) {
  Span<uint8_t> table;
  uint32_t n;
  Span<uint32_t> sel;
  if (!Table(args, 1, &table) || !Selection(args, 2, &sel) || !Index(args, 3, &n)) return;
  if (n > sel.length) {
    Fail(args, "kernels: n exceeds the selection", true);
    return;
  }
  Local<Value> c = args[0];
  uint32_t k;
  if (c->IsUint8Array()) {
    Span<uint8_t> col = SpanOf<uint8_t>(c);
    k = CodesRefineLoop(col.data, col.length, table.data, table.length, sel.data, n);
  } else if (c->IsUint16Array()) {
    Span<uint16_t> col = SpanOf<uint16_t>(c);
    k = CodesRefineLoop(col.data, col.length, table.data, table.length, sel.data, n);
  } else if (c->IsUint32Array()) {
    Span<uint32_t> col = SpanOf<uint32_t>(c);
    k = CodesRefineLoop(col.data, col.length, table.data, table.length, sel.data, n);
  } else {
    Fail(args, "kernels: codes are a Uint8Array, a Uint16Array or a Uint32Array");
    return;
  }
  args.GetReturnValue().Set(k);
}

// flagsRange(flags, mask, want, a, b, sel, at) / flagsRefine(flags, mask, want, sel, n):
// (flags[r] & mask) === want, on a Uint32Array.
void FlagsRange(const FunctionCallbackInfo<Value>& args) {
  uint32_t mask, want, a, b, at;
  Span<uint32_t> sel;
  if (!args[0]->IsUint32Array()) {
    Fail(args, "kernels: flags are a Uint32Array");
    return;
  }
  if (!Index(args, 1, &mask) || !Index(args, 2, &want) || !Index(args, 3, &a) || !Index(args, 4, &b) || !Selection(args, 5, &sel) ||
      !Index(args, 6, &at))
    return;
  Span<uint32_t> flags = SpanOf<uint32_t>(args[0]);
  if (!RunFits(args, flags.length, a, b, sel, at)) return;
  args.GetReturnValue().Set(FlagsRun(flags.data, mask, want, a, b, sel.data, at));
}

void FlagsRefine(const FunctionCallbackInfo<Value>& args) {
  uint32_t mask, want, n;
  Span<uint32_t> sel;
  if (!args[0]->IsUint32Array()) {
    Fail(args, "kernels: flags are a Uint32Array");
    return;
  }
  if (!Index(args, 1, &mask) || !Index(args, 2, &want) || !Selection(args, 3, &sel) || !Index(args, 4, &n)) return;
  if (n > sel.length) {
    Fail(args, "kernels: n exceeds the selection", true);
    return;
  }
  Span<uint32_t> flags = SpanOf<uint32_t>(args[0]);
  uint32_t k = 0;
  for (uint32_t i = 0; i < n; i++) {
    const uint32_t r = sel.data[i];
    if (r >= flags.length) continue;
    sel.data[k] = r;
    k += static_cast<uint32_t>((flags.data[r] & mask) == want);
  }
  args.GetReturnValue().Set(k);
}

bool Coordinates(const FunctionCallbackInfo<Value>& args, Span<double>* lon, Span<double>* lat, double box[4]) {
  if (!args[0]->IsFloat64Array() || !args[1]->IsFloat64Array()) return Fail(args, "kernels: coordinates are Float64Arrays");
  *lon = SpanOf<double>(args[0]);
  *lat = SpanOf<double>(args[1]);
  for (int i = 0; i < 4; i++)
    if (!NumberArg(args, 2 + i, &box[i])) return false;
  return true;
}

uint32_t BBoxLoop(const double* lon, const double* lat, const double box[4], uint32_t a, uint32_t b, uint32_t* sel, uint32_t k) {
  const double minLon = box[0], minLat = box[1], maxLon = box[2], maxLat = box[3];
  for (uint32_t r = a; r < b; r++) {
    const double x = lon[r];
    const double y = lat[r];
    sel[k] = r;
    k += static_cast<uint32_t>(x >= minLon) & static_cast<uint32_t>(x <= maxLon) & static_cast<uint32_t>(y >= minLat) &
         static_cast<uint32_t>(y <= maxLat);
  }
  return k;
}

#ifdef EDIFICE_AVX2
// As RangeLoopAvx2 over both coordinates; NaN fails the ordered comparisons, as in the scalar loop.
__attribute__((target("avx2,popcnt"))) uint32_t BBoxLoopAvx2(const double* lon, const double* lat, const double box[4], uint32_t a, uint32_t b,
                                                             uint32_t* sel, uint32_t k) {
  const __m256d x0 = _mm256_set1_pd(box[0]), y0 = _mm256_set1_pd(box[1]), x1 = _mm256_set1_pd(box[2]), y1 = _mm256_set1_pd(box[3]);
  const __m256i eight = _mm256_set1_epi32(8);
  __m256i rows = FirstRows(a);
  uint32_t r = a;
  for (; b - r >= 8; r += 8) {
    int bits = 0;
    for (int h = 0; h < 2; h++) {
      const __m256d x = _mm256_loadu_pd(lon + r + 4 * h), y = _mm256_loadu_pd(lat + r + 4 * h);
      const __m256d in = _mm256_and_pd(_mm256_and_pd(_mm256_cmp_pd(x, x0, _CMP_GE_OQ), _mm256_cmp_pd(x, x1, _CMP_LE_OQ)),
                                       _mm256_and_pd(_mm256_cmp_pd(y, y0, _CMP_GE_OQ), _mm256_cmp_pd(y, y1, _CMP_LE_OQ)));
      bits |= _mm256_movemask_pd(in) << (4 * h);
    }
    k = Pack(rows, static_cast<unsigned>(bits), sel, k);
    rows = _mm256_add_epi32(rows, eight);
  }
  return BBoxLoop(lon, lat, box, r, b, sel, k);
}

__attribute__((target("avx512f,popcnt"))) uint32_t BBoxLoopAvx512(const double* lon, const double* lat, const double box[4], uint32_t a, uint32_t b,
                                                                 uint32_t* sel, uint32_t k) {
  const __m512d x0 = _mm512_set1_pd(box[0]), y0 = _mm512_set1_pd(box[1]), x1 = _mm512_set1_pd(box[2]), y1 = _mm512_set1_pd(box[3]);
  const __m512i sixteen = _mm512_set1_epi32(16);
  __m512i rows = FirstRows16(a);
  uint32_t r = a;
  for (; b - r >= 16; r += 16) {
    unsigned bits = 0;
    for (int h = 0; h < 2; h++) {
      const __m512d x = _mm512_loadu_pd(lon + r + 8 * h), y = _mm512_loadu_pd(lat + r + 8 * h);
      const unsigned in = _mm512_cmp_pd_mask(x, x0, _CMP_GE_OQ) & _mm512_cmp_pd_mask(x, x1, _CMP_LE_OQ) & _mm512_cmp_pd_mask(y, y0, _CMP_GE_OQ) &
                          _mm512_cmp_pd_mask(y, y1, _CMP_LE_OQ);
      bits |= in << (8 * h);
    }
    k = Pack16(rows, static_cast<__mmask16>(bits), sel, k);
    rows = _mm512_add_epi32(rows, sixteen);
  }
  return BBoxLoop(lon, lat, box, r, b, sel, k);
}
#endif

// The rows of [a, b) whose point lies in box (minLon, minLat, maxLon, maxLat), by 8 or 16 at once where the CPU allows.
uint32_t BBoxRun(const double* lon, const double* lat, const double box[4], uint32_t a, uint32_t b, uint32_t* sel) {
#ifdef EDIFICE_AVX2
  if (kAvx512) return BBoxLoopAvx512(lon, lat, box, a, b, sel, 0);
  if (kAvx2) return BBoxLoopAvx2(lon, lat, box, a, b, sel, 0);
#endif
  return BBoxLoop(lon, lat, box, a, b, sel, 0);
}

// bboxRange(lon, lat, minLon, minLat, maxLon, maxLat, a, b, sel): rows of [a, b) whose point
// lies in the box, edges included, written to sel from sel[0] on; returns their count.
void BBoxRange(const FunctionCallbackInfo<Value>& args) {
  Span<double> lon, lat;
  double box[4];
  uint32_t a, b;
  Span<uint32_t> sel;
  if (!Coordinates(args, &lon, &lat, box) || !Index(args, 6, &a) || !Index(args, 7, &b) || !Selection(args, 8, &sel)) return;
  if (!RunFits(args, lon.length < lat.length ? lon.length : lat.length, a, b, sel, 0)) return;
  args.GetReturnValue().Set(BBoxRun(lon.data, lat.data, box, a, b, sel.data));
}

// bboxRefine(lon, lat, minLon, minLat, maxLon, maxLat, sel, n).
void BBoxRefine(const FunctionCallbackInfo<Value>& args) {
  Span<double> lon, lat;
  double box[4];
  uint32_t n;
  Span<uint32_t> sel;
  if (!Coordinates(args, &lon, &lat, box) || !Selection(args, 6, &sel) || !Index(args, 7, &n)) return;
  if (n > sel.length) {
    Fail(args, "kernels: n exceeds the selection", true);
    return;
  }
  const size_t length = lon.length < lat.length ? lon.length : lat.length;
  const double minLon = box[0], minLat = box[1], maxLon = box[2], maxLat = box[3];
  uint32_t k = 0;
  for (uint32_t i = 0; i < n; i++) {
    const uint32_t r = sel.data[i];
    if (r >= length) continue;
    const double x = lon.data[r];
    const double y = lat.data[r];
    sel.data[k] = r;
    k += static_cast<uint32_t>(x >= minLon) & static_cast<uint32_t>(x <= maxLon) & static_cast<uint32_t>(y >= minLat) &
         static_cast<uint32_t>(y <= maxLat);
  }
  args.GetReturnValue().Set(k);
}

template <typename T>
uint32_t TiesLoop(const T* col, uint32_t lo, uint32_t hi, uint32_t* sel, uint32_t k, T m, const uint32_t* rank, uint64_t rankBound) {
  for (uint32_t r = lo; r < hi; r++) {
    const T v = col[r];
    if (v > m || (v == m && rank[r] < rankBound)) sel[k++] = r;
  }
  return k;
}

#ifdef EDIFICE_AVX2
// rank[r] < bound for 8 rows at once, for a bound below 2^32: unsigned as a signed comparison,
// both sides with the sign bit flipped.
struct RanksBelow {
  __m256i bound;
  __m256i flip;
  __attribute__((target("avx2,popcnt"))) explicit RanksBelow(uint64_t rankBound)
      : bound(_mm256_set1_epi32(static_cast<int32_t>(static_cast<uint32_t>(rankBound) ^ 0x80000000u))),
        flip(_mm256_set1_epi32(static_cast<int32_t>(0x80000000u))) {}
  __attribute__((target("avx2,popcnt"))) __m256i operator()(const uint32_t* rank) const {
    return _mm256_cmpgt_epi32(bound, _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(rank)), flip));
  }
};

// Rows above m packed 8 at once, as the range's first pass packs them; in a group holding a
// row equal to m (a tie, frequent on a key of few values such as heights in decimetres), the
// group's ranks are compared with the bound too: ranks are per row, so they load as the keys do.
template <typename T>
__attribute__((target("avx2,popcnt"))) uint32_t TiesLoopAvx2(const T* col, uint32_t lo, uint32_t hi, uint32_t* sel, uint32_t k, T m,
                                                             const uint32_t* rank, uint64_t rankBound) {
  const __m256i vm = _mm256_set1_epi32(m);
  const __m256i eight = _mm256_set1_epi32(8);
  const RanksBelow below(rankBound);
  __m256i rows = FirstRows(lo);
  uint32_t r = lo;
  for (; hi - r >= 8; r += 8, rows = _mm256_add_epi32(rows, eight)) {
    const __m256i v = Widen<T>(col + r);
    __m256i pass = _mm256_cmpgt_epi32(v, vm);
    const __m256i tie = _mm256_cmpeq_epi32(v, vm);
    if (_mm256_movemask_ps(_mm256_castsi256_ps(tie)) != 0) pass = _mm256_or_si256(pass, _mm256_and_si256(tie, below(rank + r)));
    k = Pack(rows, static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(pass))), sel, k);
  }
  return TiesLoop(col, r, hi, sel, k, m, rank, rankBound);
}
#endif

// candidates(col, lo, hi, sel, bound, tie, rank, rankBound[, maxima, thr, leafRows]): rows of
// [lo, hi) whose key can still enter a heap (sort-keys.ts), written to sel; returns their count.
// Float64Array: key > bound, or equal to it with rank < rankBound (NaN, an unknown key, counts as
// -Infinity). Int32Array or Int16Array: bound is the least stored integer that can enter
// (lowerCode: a whole number or an infinity), and a value equal to it enters only with rank <
// rankBound when it is also `tie`. With `maxima` (a Float32Array, the greatest key of each leaf of
// leafRows rows, rounded up), leaves whose greatest key is below thr (the threshold as a key) are
// not read: none of their rows can enter, so the rows listed are the same.
template <typename T>
uint32_t IntCandidates(const T* col, uint32_t lo, uint32_t hi, uint32_t* sel, uint32_t k, double min, double tie, const uint32_t* rank,
                       uint64_t rankBound) {
  constexpr double kMin = static_cast<double>(std::numeric_limits<T>::min());
  constexpr double kMax = static_cast<double>(std::numeric_limits<T>::max());
  if (min > kMax) return k;
  if (min < kMin) {
    for (uint32_t r = lo; r < hi; r++) sel[k++] = r;
    return k;
  }
  const T m = static_cast<T>(min);
  // Every row at or above m (no tie, or one every rank settles): the first pass of a range up to
  // the type's greatest value.
  if (!(tie == min) || rankBound > 0xffffffffull) return RangeRun(col, m, std::numeric_limits<T>::max(), lo, hi, sel, k);
#ifdef EDIFICE_AVX2
  if (kAvx2) return TiesLoopAvx2(col, lo, hi, sel, k, m, rank, rankBound);
#endif
  return TiesLoop(col, lo, hi, sel, k, m, rank, rankBound);
}

uint32_t F64Candidates(const double* col, uint32_t lo, uint32_t hi, uint32_t* sel, uint32_t k, double bound, const uint32_t* rank,
                       uint64_t rankBound) {
  const bool unknownTies = bound == -std::numeric_limits<double>::infinity();
  for (uint32_t r = lo; r < hi; r++) {
    const double v = col[r];
    if (v > bound || ((v == bound || (v != v && unknownTies)) && rank[r] < rankBound)) sel[k++] = r;
  }
  return k;
}

// loop(a, b, k) over the rows of [lo, hi) less the leaves whose greatest key is below thr, in
// runs of adjacent leaves read; returns the last k.
template <typename Loop>
uint32_t ByLeaf(const float* maxima, double thr, uint32_t leafRows, uint32_t lo, uint32_t hi, Loop loop) {
  uint32_t k = 0;
  uint32_t from = lo;
  for (uint32_t r = lo; r < hi;) {
    const uint32_t leaf = r / leafRows;
    const uint64_t leafEnd = static_cast<uint64_t>(leaf + 1) * leafRows;
    const uint32_t end = leafEnd < hi ? static_cast<uint32_t>(leafEnd) : hi;
    if (maxima[leaf] < thr) {
      if (from < r) k = loop(from, r, k);
      from = end;
    }
    r = end;
  }
  if (from < hi) k = loop(from, hi, k);
  return k;
}

void Candidates(const FunctionCallbackInfo<Value>& args) {
  uint32_t lo, hi;
  double bound, tie;
  Span<uint32_t> sel, rank;
  uint64_t rankBound;
  if (!Index(args, 1, &lo) || !Index(args, 2, &hi) || !Selection(args, 3, &sel) || !NumberArg(args, 4, &bound) || !NumberArg(args, 5, &tie) ||
      !Ranks(args, 6, &rank, &rankBound))
    return;
  Local<Value> c = args[0];
  size_t length;
  if (c->IsFloat64Array())
    length = SpanOf<double>(c).length;
  else if (c->IsInt32Array())
    length = SpanOf<int32_t>(c).length;
  else if (c->IsInt16Array())
    length = SpanOf<int16_t>(c).length;
  else {
    Fail(args, "kernels: candidates reads a Float64Array, an Int32Array or an Int16Array");
    return;
  }
  if (!RunFits(args, length < rank.length ? length : rank.length, lo, hi, sel, 0)) return;
  const float* maxima = nullptr;
  double thr = 0;
  uint32_t leafRows = 0;
  if (args.Length() > 8 && !args[8]->IsNullOrUndefined()) {
    if (!args[8]->IsFloat32Array()) {
      Fail(args, "kernels: leaf maxima are a Float32Array");
      return;
    }
    if (!NumberArg(args, 9, &thr) || !Index(args, 10, &leafRows)) return;
    Span<float> m = SpanOf<float>(args[8]);
    if (leafRows == 0 || (hi > lo && (hi - 1) / leafRows >= m.length)) {
      Fail(args, "kernels: the leaf maxima must cover the rows [lo, hi)", true);
      return;
    }
    maxima = m.data;
  }
  uint32_t* out = sel.data;
  const uint32_t* rk = rank.data;
  uint32_t k;
  if (c->IsFloat64Array()) {
    const double* col = SpanOf<double>(c).data;
    auto loop = [&](uint32_t a, uint32_t b, uint32_t at) { return F64Candidates(col, a, b, out, at, bound, rk, rankBound); };
    k = maxima != nullptr ? ByLeaf(maxima, thr, leafRows, lo, hi, loop) : loop(lo, hi, 0);
  } else if (c->IsInt32Array()) {
    const int32_t* col = SpanOf<int32_t>(c).data;
    auto loop = [&](uint32_t a, uint32_t b, uint32_t at) { return IntCandidates(col, a, b, out, at, bound, tie, rk, rankBound); };
    k = maxima != nullptr ? ByLeaf(maxima, thr, leafRows, lo, hi, loop) : loop(lo, hi, 0);
  } else {
    const int16_t* col = SpanOf<int16_t>(c).data;
    auto loop = [&](uint32_t a, uint32_t b, uint32_t at) { return IntCandidates(col, a, b, out, at, bound, tie, rk, rankBound); };
    k = maxima != nullptr ? ByLeaf(maxima, thr, leafRows, lo, hi, loop) : loop(lo, hi, 0);
  }
  args.GetReturnValue().Set(k);
}

// The key of a row from its businesses [j, e) (sort-keys.ts): the largest band start with a
// stated size, or the largest turnover in one currency; -Infinity when none. `at(j)` is one
// business's part: the key is the greatest `at` of the row's businesses.
template <typename Part>
struct BusinessKey : Part {
  double operator()(uint32_t j, uint32_t e) const {
    double best = -std::numeric_limits<double>::infinity();
    for (; j < e; j++) {
      const double v = this->at(j);
      if (v > best) best = v;
    }
    return best;
  }
};

// v where `known`, else -Infinity, by the bits and without a branch. The turnover's part runs
// over every business of a range, and a branch on its currency mispredicts on about every other
// business where two currencies mix: 4x slower over the synthetic country's, half of them in RON.
inline double ValueOrNegativeInfinity(bool known, double v) {
  constexpr uint64_t kNegativeInfinityBits = 0xfff0000000000000ull;
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  const uint64_t keep = 0 - static_cast<uint64_t>(known);
  bits = (bits & keep) | (kNegativeInfinityBits & ~keep);
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

struct EmployeesPart {
  const int32_t* min;
  double at(uint32_t j) const { return min[j] != kNullI32 ? static_cast<double>(min[j]) : -std::numeric_limits<double>::infinity(); }
  static constexpr int32_t kNullI32 = std::numeric_limits<int32_t>::min();
};
using EmployeesKey = BusinessKey<EmployeesPart>;

// A NaN turnover is never above another: the key passes over it.
struct TurnoverPart {
  const uint16_t* currency;
  const double* turnover;
  uint32_t code;
  double at(uint32_t j) const { return ValueOrNegativeInfinity(currency[j] == code, turnover[j]); }
};
using TurnoverKey = BusinessKey<TurnoverPart>;

// The rows of [lo, hi) whose key is above thr, or equal to it with rank < rankBound, in row
// order. Above -Infinity only rows with a business can enter: the businesses of the range are
// walked, as the engine's loop walks them. At -Infinity every row can enter by its rank, and
// knownCandidates lists them from a bitset of the rows whose key is known (BusinessArgs refuses it).
template <typename Key>
uint32_t BusinessCandidates(const Key& keyOf, const Span<uint32_t>& offsets, const Span<uint32_t>& rowOf, size_t values, uint32_t lo,
                            uint32_t hi, uint32_t* sel, double thr, const Span<uint32_t>& rank, uint64_t rankBound) {
  uint32_t k = 0;
  // A row's key is above thr when one of its businesses' is, and equal to it when one is equal
  // and none above: each business is tested once, and only those at or above thr look at their
  // row (rows come in order: each is kept once). The test lists the businesses that pass a block
  // at a time without a branch, which would mispredict where many pass.
  const uint32_t end = offsets.data[hi] < values ? offsets.data[hi] : static_cast<uint32_t>(values);
  int64_t last = -1;
  constexpr uint32_t kBlock = 256;
  uint32_t passed[kBlock];
  for (uint32_t from = offsets.data[lo]; from < end; from += kBlock) {
    const uint32_t to = end - from < kBlock ? end : from + kBlock;
    uint32_t m = 0;
    for (uint32_t j = from; j < to; j++) {
      passed[m] = j;
      m += static_cast<uint32_t>(keyOf.at(j) >= thr);
    }
    for (uint32_t i = 0; i < m; i++) {
      const uint32_t j = passed[i];
      const double v = keyOf.at(j);
      const uint32_t r = rowOf.data[j];
      if (r == last) continue;
      // Rows outside the range, or whose businesses lie past the arrays or do not hold j, are a corrupt store: skipped.
      if (r < lo || r >= hi || r >= rank.length) continue;
      const uint32_t b = offsets.data[r], e = offsets.data[r + 1];
      if (e > values || b > e || j < b || j >= e) continue;
      if (v > thr || rank.data[r] < rankBound) {
        sel[k++] = r;
        last = r;
      }
    }
  }
  return k;
}

// The rows of [lo, hi) whose bit is set in `known` (bit r % 8 of byte r / 8: the rows whose key
// is known) or whose rank is below the bound, in row order: a business key's candidates while
// the threshold is an unknown key (sort-keys.ts), where every row of the range can enter.
uint32_t KnownLoop(const uint8_t* known, uint32_t lo, uint32_t hi, uint32_t* sel, const uint32_t* rank, uint64_t rankBound, uint32_t k) {
  for (uint32_t r = lo; r < hi; r++) {
    sel[k] = r;
    k += ((known[r >> 3] >> (r & 7)) & 1u) | static_cast<uint32_t>(rank[r] < rankBound);
  }
  return k;
}

#ifdef EDIFICE_AVX2
// KnownLoop 8 rows at once: their 8 bits (from one byte or two) or their ranks' test.
__attribute__((target("avx2,popcnt"))) uint32_t KnownLoopAvx2(const uint8_t* known, uint32_t lo, uint32_t hi, uint32_t* sel, const uint32_t* rank,
                                                              uint64_t rankBound) {
  const RanksBelow below(rankBound);
  const __m256i eight = _mm256_set1_epi32(8);
  __m256i rows = FirstRows(lo);
  uint32_t k = 0;
  uint32_t r = lo;
  for (; hi - r >= 8; r += 8, rows = _mm256_add_epi32(rows, eight)) {
    const uint32_t shift = r & 7u;
    // Rows r + 1 .. r + 7 are below hi, so a second byte, where one is read, holds some of them.
    uint32_t word = known[r >> 3];
    if (shift != 0) word |= static_cast<uint32_t>(known[(r >> 3) + 1]) << 8;
    const unsigned bits = ((word >> shift) & 0xffu) | static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(below(rank + r))));
    k = Pack(rows, bits, sel, k);
  }
  return KnownLoop(known, r, hi, sel, rank, rankBound, k);
}
#endif

// knownCandidates(known, lo, hi, sel, rank, rankBound): KnownLoop's rows; their count.
void KnownCandidates(const FunctionCallbackInfo<Value>& args) {
  uint32_t lo, hi;
  Span<uint32_t> sel, rank;
  uint64_t rankBound;
  if (!args[0]->IsUint8Array()) {
    Fail(args, "kernels: the rows whose key is known are a Uint8Array of bits");
    return;
  }
  if (!Index(args, 1, &lo) || !Index(args, 2, &hi) || !Selection(args, 3, &sel) || !Ranks(args, 4, &rank, &rankBound)) return;
  Span<uint8_t> known = SpanOf<uint8_t>(args[0]);
  if (lo > hi || hi > rank.length || (static_cast<size_t>(hi) + 7) / 8 > known.length) {
    Fail(args, "kernels: the rows [lo, hi) must have ranks and bits", true);
    return;
  }
  if (hi - lo > sel.length) {
    Fail(args, "kernels: the selection has no room for the rows", true);
    return;
  }
  uint32_t k = 0;
  if (rankBound > 0xffffffffull) {
    // A bound past every rank lets every row in.
    for (uint32_t r = lo; r < hi; r++) sel.data[k++] = r;
  } else {
#ifdef EDIFICE_AVX2
    if (kAvx2) k = KnownLoopAvx2(known.data, lo, hi, sel.data, rank.data, rankBound);
    else
#endif
      k = KnownLoop(known.data, lo, hi, sel.data, rank.data, rankBound, 0);
  }
  args.GetReturnValue().Set(k);
}

// employeesCandidates(offsets, rowOf, employeesMin, lo, hi, sel, thr, rank, rankBound) and
// turnoverCandidates(offsets, rowOf, currency, turnover, code, lo, hi, sel, thr, rank, rankBound):
// candidates() for the business keys.
bool BusinessArgs(const FunctionCallbackInfo<Value>& args, int at, Span<uint32_t>* offsets, Span<uint32_t>* rowOf, uint32_t* lo, uint32_t* hi,
                  Span<uint32_t>* sel, double* thr, Span<uint32_t>* rank, uint64_t* rankBound) {
  if (!args[0]->IsUint32Array() || !args[1]->IsUint32Array()) return Fail(args, "kernels: business offsets and rows are Uint32Arrays");
  *offsets = SpanOf<uint32_t>(args[0]);
  *rowOf = SpanOf<uint32_t>(args[1]);
  if (!Index(args, at, lo) || !Index(args, at + 1, hi) || !Selection(args, at + 2, sel) || !NumberArg(args, at + 3, thr) ||
      !Ranks(args, at + 4, rank, rankBound))
    return false;
  if (!(*thr > -std::numeric_limits<double>::infinity()))
    return Fail(args, "kernels: at an unknown threshold every row can enter: knownCandidates lists them", true);
  if (*lo > *hi || static_cast<size_t>(*hi) + 1 > offsets->length) return Fail(args, "kernels: the rows [lo, hi) must have offsets", true);
  if (*hi - *lo > sel->length) return Fail(args, "kernels: the selection has no room for the rows", true);
  if (offsets->data[*hi] > rowOf->length || offsets->data[*lo] > offsets->data[*hi])
    return Fail(args, "kernels: the businesses of [lo, hi) must lie within their arrays", true);
  return true;
}

void EmployeesCandidates(const FunctionCallbackInfo<Value>& args) {
  Span<uint32_t> offsets, rowOf, sel, rank;
  uint32_t lo, hi;
  double thr;
  uint64_t rankBound;
  if (!args[2]->IsInt32Array()) {
    Fail(args, "kernels: band starts are an Int32Array");
    return;
  }
  if (!BusinessArgs(args, 3, &offsets, &rowOf, &lo, &hi, &sel, &thr, &rank, &rankBound)) return;
  Span<int32_t> min = SpanOf<int32_t>(args[2]);
  args.GetReturnValue().Set(BusinessCandidates(EmployeesKey{min.data}, offsets, rowOf, min.length, lo, hi, sel.data, thr, rank, rankBound));
}

void TurnoverCandidates(const FunctionCallbackInfo<Value>& args) {
  Span<uint32_t> offsets, rowOf, sel, rank;
  uint32_t lo, hi, code;
  double thr;
  uint64_t rankBound;
  if (!args[2]->IsUint16Array() || !args[3]->IsFloat64Array()) {
    Fail(args, "kernels: currencies are a Uint16Array and turnovers a Float64Array");
    return;
  }
  if (!Index(args, 4, &code) || !BusinessArgs(args, 5, &offsets, &rowOf, &lo, &hi, &sel, &thr, &rank, &rankBound)) return;
  Span<uint16_t> currency = SpanOf<uint16_t>(args[2]);
  Span<double> turnover = SpanOf<double>(args[3]);
  const size_t values = currency.length < turnover.length ? currency.length : turnover.length;
  TurnoverKey key{currency.data, turnover.data, code};
  args.GetReturnValue().Set(BusinessCandidates(key, offsets, rowOf, values, lo, hi, sel.data, thr, rank, rankBound));
}

// Keeps the rows of sel[0..n) whose key can still enter a heap at thr: above it, or equal to it
// with rank < rankBound (an unknown key is -Infinity), in order; their count. Offering a chunk's
// matches reads each row's businesses: most rows cannot enter, and the loop tells at once.
template <typename Key>
uint32_t BusinessRefine(const Key& keyOf, const Span<uint32_t>& offsets, size_t values, uint32_t* sel, uint32_t n, double thr,
                        const Span<uint32_t>& rank, uint64_t rankBound) {
  const size_t rows = rank.length < offsets.length - 1 ? rank.length : offsets.length - 1;
  uint32_t k = 0;
  for (uint32_t i = 0; i < n; i++) {
    const uint32_t r = sel[i];
    if (r >= rows) continue;
    const uint32_t b = offsets.data[r], e = offsets.data[r + 1];
    const double key = b < e && e <= values ? keyOf(b, e) : -std::numeric_limits<double>::infinity();
    if (key > thr || (key == thr && rank.data[r] < rankBound)) sel[k++] = r;
  }
  return k;
}

// employeesRefine(offsets, employeesMin, sel, n, thr, rank, rankBound) and
// turnoverRefine(offsets, currency, turnover, code, sel, n, thr, rank, rankBound).
bool BusinessRefineArgs(const FunctionCallbackInfo<Value>& args, int at, Span<uint32_t>* offsets, Span<uint32_t>* sel, uint32_t* n,
                        double* thr, Span<uint32_t>* rank, uint64_t* rankBound) {
  if (!args[0]->IsUint32Array()) return Fail(args, "kernels: business offsets are a Uint32Array");
  *offsets = SpanOf<uint32_t>(args[0]);
  if (offsets->length == 0) return Fail(args, "kernels: business offsets hold one more entry than rows", true);
  if (!Selection(args, at, sel) || !Index(args, at + 1, n) || !NumberArg(args, at + 2, thr) || !Ranks(args, at + 3, rank, rankBound))
    return false;
  if (*n > sel->length) return Fail(args, "kernels: n exceeds the selection", true);
  return true;
}

void EmployeesRefine(const FunctionCallbackInfo<Value>& args) {
  Span<uint32_t> offsets, sel, rank;
  uint32_t n;
  double thr;
  uint64_t rankBound;
  if (!args[1]->IsInt32Array()) {
    Fail(args, "kernels: band starts are an Int32Array");
    return;
  }
  if (!BusinessRefineArgs(args, 2, &offsets, &sel, &n, &thr, &rank, &rankBound)) return;
  Span<int32_t> min = SpanOf<int32_t>(args[1]);
  args.GetReturnValue().Set(BusinessRefine(EmployeesKey{min.data}, offsets, min.length, sel.data, n, thr, rank, rankBound));
}

void TurnoverRefine(const FunctionCallbackInfo<Value>& args) {
  Span<uint32_t> offsets, sel, rank;
  uint32_t n, code;
  double thr;
  uint64_t rankBound;
  if (!args[1]->IsUint16Array() || !args[2]->IsFloat64Array()) {
    Fail(args, "kernels: currencies are a Uint16Array and turnovers a Float64Array");
    return;
  }
  if (!Index(args, 3, &code) || !BusinessRefineArgs(args, 4, &offsets, &sel, &n, &thr, &rank, &rankBound)) return;
  Span<uint16_t> currency = SpanOf<uint16_t>(args[1]);
  Span<double> turnover = SpanOf<double>(args[2]);
  const size_t values = currency.length < turnover.length ? currency.length : turnover.length;
  TurnoverKey key{currency.data, turnover.data, code};
  args.GetReturnValue().Set(BusinessRefine(key, offsets, values, sel.data, n, thr, rank, rankBound));
}

// A key as 64 bits that order the better (greater) keys first: the double's bits made to sort
// as unsigned integers, then inverted. -0 is +0 first, as the two compare equal; keys are never NaN.
inline uint64_t BetterFirst(double k) {
  k += 0.0;
  uint64_t u;
  std::memcpy(&u, &k, 8);
  const uint64_t ob = (u >> 63) ? ~u : (u | 0x8000000000000000ull);
  return ~ob;
}
inline double KeyFromBetter(uint64_t d) {
  const uint64_t ob = ~d;
  const uint64_t u = (ob >> 63) ? (ob & 0x7fffffffffffffffull) : ~ob;
  double k;
  std::memcpy(&k, &u, 8);
  return k;
}

// Partitions a[left..right] around the value of a[k]: smaller elements before it, the others
// after; returns its place. Lomuto's scheme without a branch on the comparison (Alexandrescu,
// "Lomuto's Comeback", 2019): a buffer's rows come in no order, so a branch on each comparison
// mispredicts about every other element; Hoare's partition, which branches, takes about 3 times
// as long over 2,000 to 15,000 words. Elements equal to p go after it, so many equal elements
// would make the selection quadratic: a buffer's words are distinct (Select).
template <typename T>
ptrdiff_t PartitionAt(T* a, ptrdiff_t left, ptrdiff_t right, ptrdiff_t k) {
  std::swap(a[left], a[k]);
  const T p = a[left];
  T* first = a + left + 1;  // [left + 1, first) holds the elements smaller than p
  T* const end = a + right + 1;
  for (T* read = first; read < end; ++read) {
    const T x = *read;
    const ptrdiff_t smaller = -static_cast<ptrdiff_t>(x < p);
    const ptrdiff_t delta = smaller & (read - first);
    first[delta] = *first;
    read[-delta] = x;
    first -= smaller;
  }
  --first;
  std::swap(a[left], *first);
  return first - a;
}

// Floyd and Rivest's selection (CACM 1975, algorithm 489): places the element of place k of
// a[left..right] at k, smaller before, larger after. Above 600 elements it first selects within a
// sample around k, so that the partition's pivot lies close to place k: about n + min(k, n - k)
// comparisons where std::nth_element's median-of-three takes 2-3n (a buffer's selections are
// mostly medians: it keeps the best half of what it holds).
template <typename T>
void FloydRivest(T* a, ptrdiff_t left, ptrdiff_t right, ptrdiff_t k) {
  while (right > left) {
    if (right - left > 600) {
      const double n = static_cast<double>(right - left + 1);
      const double i = static_cast<double>(k - left + 1);
      const double z = std::log(n);
      const double s = 0.5 * std::exp(2 * z / 3);
      const double sd = 0.5 * std::sqrt(z * s * (n - s) / n) * (i < n / 2 ? -1 : 1);
      const ptrdiff_t from = std::max(left, static_cast<ptrdiff_t>(static_cast<double>(k) - i * s / n + sd));
      const ptrdiff_t to = std::min(right, static_cast<ptrdiff_t>(static_cast<double>(k) + (n - i) * s / n + sd));
      FloydRivest(a, from, to, k);
    }
    const ptrdiff_t j = PartitionAt(a, left, right, k);
    if (j == k) return;
    if (j < k) left = j + 1;
    else right = j - 1;
  }
}

using Word = unsigned __int128;

// A slot as one word: key (BetterFirst) in the high half, then rank, then row.
void PackWordsFrom(const double* k, const uint32_t* rk, const uint32_t* rw, uint32_t n, Word* w, uint32_t from) {
  for (uint32_t i = from; i < n; i++) w[i] = (static_cast<Word>(BetterFirst(k[i])) << 64) | (static_cast<uint64_t>(rk[i]) << 32) | rw[i];
}

void UnpackWordsFrom(const Word* w, uint32_t n, double* k, uint32_t* rk, uint32_t* rw, uint32_t from) {
  for (uint32_t i = from; i < n; i++) {
    k[i] = KeyFromBetter(static_cast<uint64_t>(w[i] >> 64));
    rk[i] = static_cast<uint32_t>(static_cast<uint64_t>(w[i]) >> 32);
    rw[i] = static_cast<uint32_t>(w[i]);
  }
}

#ifdef EDIFICE_AVX2
// The same four slots at a time: packing and unpacking took as long as the selection itself.
// The key's bits flip as BetterFirst's do: all of them for a negative key, else the sign bit,
// then all of them again (-0 is added to 0 first, so that both zeros pack alike).
__attribute__((target("avx2,popcnt"))) void PackWordsAvx2(const double* k, const uint32_t* rk, const uint32_t* rw, uint32_t n, Word* w) {
  const __m256i sign = _mm256_set1_epi64x(static_cast<int64_t>(0x8000000000000000ull));
  const __m256i ones = _mm256_set1_epi64x(-1);
  const __m256i zero = _mm256_setzero_si256();
  uint32_t i = 0;
  for (; n - i >= 4; i += 4) {
    const __m256i u = _mm256_castpd_si256(_mm256_add_pd(_mm256_loadu_pd(k + i), _mm256_setzero_pd()));
    const __m256i flip = _mm256_xor_si256(_mm256_or_si256(_mm256_cmpgt_epi64(zero, u), sign), ones);
    const __m256i better = _mm256_xor_si256(u, flip);
    const __m128i rows = _mm_loadu_si128(reinterpret_cast<const __m128i*>(rw + i));
    const __m128i ranks = _mm_loadu_si128(reinterpret_cast<const __m128i*>(rk + i));
    const __m256i low = _mm256_set_m128i(_mm_unpackhi_epi32(rows, ranks), _mm_unpacklo_epi32(rows, ranks));
    const __m256i a = _mm256_unpacklo_epi64(low, better);
    const __m256i b = _mm256_unpackhi_epi64(low, better);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(w + i), _mm256_permute2x128_si256(a, b, 0x20));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(w + i + 2), _mm256_permute2x128_si256(a, b, 0x31));
  }
  PackWordsFrom(k, rk, rw, n, w, i);
}

__attribute__((target("avx2,popcnt"))) void UnpackWordsAvx2(const Word* w, uint32_t n, double* k, uint32_t* rk, uint32_t* rw) {
  const __m256i sign = _mm256_set1_epi64x(static_cast<int64_t>(0x8000000000000000ull));
  const __m256i ones = _mm256_set1_epi64x(-1);
  const __m256i zero = _mm256_setzero_si256();
  const __m256i halves = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
  uint32_t i = 0;
  for (; n - i >= 4; i += 4) {
    const __m256i w01 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + i));
    const __m256i w23 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + i + 2));
    const __m256i a = _mm256_permute2x128_si256(w01, w23, 0x20);
    const __m256i b = _mm256_permute2x128_si256(w01, w23, 0x31);
    const __m256i ob = _mm256_xor_si256(_mm256_unpackhi_epi64(a, b), ones);
    const __m256i flip = _mm256_or_si256(_mm256_xor_si256(_mm256_cmpgt_epi64(zero, ob), ones), sign);
    _mm256_storeu_pd(k + i, _mm256_castsi256_pd(_mm256_xor_si256(ob, flip)));
    const __m256i split = _mm256_permutevar8x32_epi32(_mm256_unpacklo_epi64(a, b), halves);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(rw + i), _mm256_castsi256_si128(split));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(rk + i), _mm256_extracti128_si256(split, 1));
  }
  UnpackWordsFrom(w, n, k, rk, rw, i);
}
#endif

void PackWords(const double* k, const uint32_t* rk, const uint32_t* rw, uint32_t n, Word* w) {
#ifdef EDIFICE_AVX2
  if (kAvx2) return PackWordsAvx2(k, rk, rw, n, w);
#endif
  PackWordsFrom(k, rk, rw, n, w, 0);
}

void UnpackWords(const Word* w, uint32_t n, double* k, uint32_t* rk, uint32_t* rw) {
#ifdef EDIFICE_AVX2
  if (kAvx2) return UnpackWordsAvx2(w, n, k, rk, rw);
#endif
  UnpackWordsFrom(w, n, k, rk, rw, 0);
}

// select(key, rank, row, lo, hi, t[, first[, drop]]): reorders slots [lo, hi] of a buffer of
// ranked rows (topk.ts), all of one snapshot, so that slot t holds the row of that place (key
// descending, then rank ascending), better rows before it and worse after; with `first` (lo <=
// first <= t), slots [first, t] hold the rows of places first..t in order (a page); with `drop`,
// the slots after t are left as they were, for a caller that drops them. Each slot becomes one
// 128-bit word (key, rank, row): a comparison is then one integer comparison and a swap one
// 16-byte move, where the parallel arrays took two comparisons and three moves.
void Select(const FunctionCallbackInfo<Value>& args) {
  if (!args[0]->IsFloat64Array() || !args[1]->IsUint32Array() || !args[2]->IsUint32Array()) {
    Fail(args, "kernels: select reads keys (Float64Array), ranks and rows (Uint32Array)");
    return;
  }
  uint32_t lo, hi, t, first;
  if (!Index(args, 3, &lo) || !Index(args, 4, &hi) || !Index(args, 5, &t)) return;
  first = t;
  if (args.Length() > 6 && !args[6]->IsUndefined() && !Index(args, 6, &first)) return;
  const bool drop = args.Length() > 7 && args[7]->IsTrue();
  Span<double> key = SpanOf<double>(args[0]);
  Span<uint32_t> rank = SpanOf<uint32_t>(args[1]);
  Span<uint32_t> row = SpanOf<uint32_t>(args[2]);
  if (hi >= key.length || hi >= rank.length || hi >= row.length || lo > first || first > t || t > hi) {
    Fail(args, "kernels: select needs lo <= first <= t <= hi within the buffer", true);
    return;
  }
  // Ranks are distinct within a snapshot, so the row never decides an order; it rides along.
  static thread_local std::vector<Word> words;
  const uint32_t n = hi - lo + 1;
  if (words.size() < n) words.resize(n);
  Word* w = words.data();
  double* k = key.data + lo;
  uint32_t* rk = rank.data + lo;
  uint32_t* rw = row.data + lo;
  PackWords(k, rk, rw, n, w);
  FloydRivest(w, 0, n - 1, t - lo);
  if (first < t) {
    // Places first..t - 1 are among the slots before t: the first of them, then the rest in order.
    FloydRivest(w, 0, t - lo - 1, first - lo);
    std::sort(w + (first - lo) + 1, w + (t - lo));
  }
  UnpackWords(w, drop ? t - lo + 1 : n, k, rk, rw);
}

// A row's key from a key column: Float64 (NaN unknown), or an integer column's stored value
// over its scale (the type's least value unknown); unknown keys are -Infinity.
inline double KeyOf(double v, double) { return v == v ? v : -std::numeric_limits<double>::infinity(); }
template <typename T>
inline double KeyOf(T v, double scale) {
  return v == std::numeric_limits<T>::min() ? -std::numeric_limits<double>::infinity() : v / scale;
}

// The key of row r into *k, false for a row past the arrays: of a key column...
template <typename T>
struct ColumnKeyAt {
  const T* col;
  size_t length;
  double scale;
  bool operator()(uint32_t r, double* k) const {
    if (r >= length) return false;
    *k = KeyOf(col[r], scale);
    return true;
  }
};

// ...or of the row's businesses (EmployeesKey, TurnoverKey).
template <typename Key>
struct BusinessKeyAt {
  Key key;
  Span<uint32_t> offsets;
  size_t values;
  bool operator()(uint32_t r, double* k) const {
    if (static_cast<size_t>(r) + 1 >= offsets.length) return false;
    const uint32_t b = offsets.data[r], e = offsets.data[r + 1];
    if (b > e || e > values) return false;
    *k = key(b, e);
    return true;
  }
};

// A deep page's buffer (topk.ts, rows of snapshot s only) and the rows offered to it: the
// arguments every append takes after its key's own.
struct Buffer {
  Span<uint32_t> sel, rank, rows, ranks, size;
  Span<double> keys;
  Span<uint16_t> snaps;
  uint32_t i, n, s, limit, cutRank = 0, topRank = 0;
  double floor, cutKey = 0, topKey = 0;
  bool cut, top = false;
};

// sel, i, n, rank, s, keys, rows, ranks, snaps, size, limit, floor, cutKey, cutRank, topKey, topRank
// from `at` on.
bool BufferArgs(const FunctionCallbackInfo<Value>& args, int at, Buffer* b) {
  if (!Selection(args, at, &b->sel) || !Index(args, at + 1, &b->i) || !Index(args, at + 2, &b->n)) return false;
  if (!args[at + 3]->IsUint32Array()) return Fail(args, "kernels: ranks are a Uint32Array");
  b->rank = SpanOf<uint32_t>(args[at + 3]);
  if (!Index(args, at + 4, &b->s) || !Index(args, at + 10, &b->limit) || !NumberArg(args, at + 11, &b->floor)) return false;
  b->cut = !args[at + 12]->IsNull();
  if (b->cut && (!NumberArg(args, at + 12, &b->cutKey) || !Index(args, at + 13, &b->cutRank))) return false;
  b->top = !args[at + 14]->IsNull();
  if (b->top && (!NumberArg(args, at + 14, &b->topKey) || !Index(args, at + 15, &b->topRank))) return false;
  if (!args[at + 5]->IsFloat64Array() || !args[at + 6]->IsUint32Array() || !args[at + 7]->IsUint32Array() || !args[at + 8]->IsUint16Array() ||
      !args[at + 9]->IsUint32Array())
    return Fail(args, "kernels: append writes keys (Float64Array), rows and ranks (Uint32Array), snapshots (Uint16Array) and a size (Uint32Array)");
  b->keys = SpanOf<double>(args[at + 5]);
  b->rows = SpanOf<uint32_t>(args[at + 6]);
  b->ranks = SpanOf<uint32_t>(args[at + 7]);
  b->snaps = SpanOf<uint16_t>(args[at + 8]);
  b->size = SpanOf<uint32_t>(args[at + 9]);
  if (b->n > b->sel.length || b->i > b->n || b->s > 0xffff || b->size.length < 1 || b->limit > b->keys.length || b->limit > b->rows.length ||
      b->limit > b->ranks.length || b->limit > b->snaps.length || b->size.data[0] > b->limit || (b->top && b->size.length < 2))
    return Fail(args, "kernels: append needs i <= n within the selection, size <= limit within the buffer, and size[1] with a top", true);
  return true;
}

// The buffer takes the rows sel[i..n) that reach its floor and rank before its cut (key, then
// rank below cutRank; no cut: cutKey null), from slot size[0] on, until it holds `limit` rows:
// as TopK's append, one row at a time. Rows that rank before its top (key, then rank below
// topRank) are only counted, in size[1]. Returns the first row of sel not yet offered; size[0]
// becomes the rows held. Rows past the key's arrays or the ranks are skipped.
template <typename KeyAt>
uint32_t AppendLoop(const KeyAt& keyAt, Buffer& b) {
  const uint16_t s = static_cast<uint16_t>(b.s);
  uint32_t z = b.size.data[0];
  uint32_t above = 0;
  uint32_t i = b.i;
  for (; i < b.n && z < b.limit; i++) {
    const uint32_t r = b.sel.data[i];
    double k;
    if (r >= b.rank.length || !keyAt(r, &k)) continue;
    const uint32_t rk = b.rank.data[r];
    if (k < b.floor || (b.cut && (k < b.cutKey || (k == b.cutKey && rk >= b.cutRank)))) continue;
    // Written either way and kept only after the top: rows before and after it mix at random,
    // and a branch on it would mispredict on about every other row.
    const uint32_t before = b.top & ((k > b.topKey) | ((k == b.topKey) & (rk < b.topRank)));
    b.keys.data[z] = k;
    b.rows.data[z] = r;
    b.ranks.data[z] = rk;
    b.snaps.data[z] = s;
    z += 1 - before;
    above += before;
  }
  b.size.data[0] = z;
  if (b.top) b.size.data[1] += above;
  return i;
}

// append(col, scale, ...Buffer): a key column (Float64Array, or an Int32Array or Int16Array over scale).
void Append(const FunctionCallbackInfo<Value>& args) {
  double scale;
  Buffer b;
  if (!NumberArg(args, 1, &scale) || !BufferArgs(args, 2, &b)) return;
  Local<Value> c = args[0];
  uint32_t i;
  if (c->IsFloat64Array()) {
    Span<double> col = SpanOf<double>(c);
    i = AppendLoop(ColumnKeyAt<double>{col.data, col.length, scale}, b);
  } else if (c->IsInt32Array()) {
    Span<int32_t> col = SpanOf<int32_t>(c);
    i = AppendLoop(ColumnKeyAt<int32_t>{col.data, col.length, scale}, b);
  } else if (c->IsInt16Array()) {
    Span<int16_t> col = SpanOf<int16_t>(c);
    i = AppendLoop(ColumnKeyAt<int16_t>{col.data, col.length, scale}, b);
  } else {
    Fail(args, "kernels: append reads a Float64Array, an Int32Array or an Int16Array");
    return;
  }
  args.GetReturnValue().Set(i);
}

// appendEmployees(offsets, employeesMin, ...Buffer): the employees key of a row's businesses.
void AppendEmployees(const FunctionCallbackInfo<Value>& args) {
  Buffer b;
  if (!args[0]->IsUint32Array() || !args[1]->IsInt32Array()) {
    Fail(args, "kernels: business offsets are a Uint32Array, band starts an Int32Array");
    return;
  }
  if (!BufferArgs(args, 2, &b)) return;
  Span<int32_t> min = SpanOf<int32_t>(args[1]);
  args.GetReturnValue().Set(AppendLoop(BusinessKeyAt<EmployeesKey>{EmployeesKey{min.data}, SpanOf<uint32_t>(args[0]), min.length}, b));
}

// appendTurnover(offsets, currency, turnover, code, ...Buffer): the turnover key in currency `code`.
void AppendTurnover(const FunctionCallbackInfo<Value>& args) {
  Buffer b;
  uint32_t code;
  if (!args[0]->IsUint32Array() || !args[1]->IsUint16Array() || !args[2]->IsFloat64Array()) {
    Fail(args, "kernels: business offsets are a Uint32Array, currencies a Uint16Array, turnovers a Float64Array");
    return;
  }
  if (!Index(args, 3, &code) || !BufferArgs(args, 4, &b)) return;
  Span<uint16_t> currency = SpanOf<uint16_t>(args[1]);
  Span<double> turnover = SpanOf<double>(args[2]);
  const size_t values = currency.length < turnover.length ? currency.length : turnover.length;
  TurnoverKey key{currency.data, turnover.data, code};
  args.GetReturnValue().Set(AppendLoop(BusinessKeyAt<TurnoverKey>{key, SpanOf<uint32_t>(args[0]), values}, b));
}

void Export(Local<Context> context, Local<Object> exports, const char* name, FunctionCallback fn) {
  Isolate* isolate = context->GetIsolate();
  exports->Set(context, String::NewFromUtf8(isolate, name).ToLocalChecked(), FunctionTemplate::New(isolate, fn)->GetFunction(context).ToLocalChecked())
      .FromJust();
}

}  // namespace

NODE_MODULE_INIT() {
  Export(context, exports, "range", Range);
  Export(context, exports, "refine", Refine);
  Export(context, exports, "codesRange", CodesRange);
  Export(context, exports, "codesRefine", CodesRefine);
  Export(context, exports, "flagsRange", FlagsRange);
  Export(context, exports, "flagsRefine", FlagsRefine);
  Export(context, exports, "bboxRange", BBoxRange);
  Export(context, exports, "bboxRefine", BBoxRefine);
  Export(context, exports, "candidates", Candidates);
  Export(context, exports, "select", Select);
  Export(context, exports, "append", Append);
  Export(context, exports, "appendEmployees", AppendEmployees);
  Export(context, exports, "appendTurnover", AppendTurnover);
  Export(context, exports, "employeesCandidates", EmployeesCandidates);
  Export(context, exports, "turnoverCandidates", TurnoverCandidates);
  Export(context, exports, "knownCandidates", KnownCandidates);
  Export(context, exports, "employeesRefine", EmployeesRefine);
  Export(context, exports, "turnoverRefine", TurnoverRefine);
}
