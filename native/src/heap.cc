// The addon's calls about the process's memory: into V8's own API (N-API has none for an isolate's
// heap), and into the C library's allocator. Built from source against the running Node's headers
// (as the rest of the addon is), so the V8 API it calls is that Node's own.
#include <node_api.h>
#include <v8.h>

#include <cstring>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "heap.h"

namespace {

// What a thread's isolate has allocated in its new space: counted at every collection's start
// (what the new space gained since the last one ended), and read with what it holds now.
struct Allocation {
  double counted = 0;
  size_t since = 0;
};

size_t NewSpaceUsed(v8::Isolate *isolate) {
  v8::HeapSpaceStatistics space;
  for (size_t index = 0; index < isolate->NumberOfHeapSpaces(); index++) {
    if (isolate->GetHeapSpaceStatistics(&space, index) && std::strcmp(space.space_name(), "new_space") == 0)
      return space.space_used_size();
  }
  return 0;
}

void BeforeCollection(v8::Isolate *isolate, v8::GCType, v8::GCCallbackFlags, void *data) {
  auto *allocation = static_cast<Allocation *>(data);
  size_t used = NewSpaceUsed(isolate);
  if (used > allocation->since) allocation->counted += used - allocation->since;
}

void AfterCollection(v8::Isolate *isolate, v8::GCType, v8::GCCallbackFlags, void *data) {
  static_cast<Allocation *>(data)->since = NewSpaceUsed(isolate);
}

void StopCounting(napi_env, void *data, void *) {
  auto *allocation = static_cast<Allocation *>(data);
  v8::Isolate *isolate = v8::Isolate::GetCurrent();
  if (isolate != nullptr) {
    isolate->RemoveGCPrologueCallback(BeforeCollection, allocation);
    isolate->RemoveGCEpilogueCallback(AfterCollection, allocation);
  }
  delete allocation;
}

}  // namespace

// reduceHeap() -> undefined. Tells the calling thread's isolate its memory is under moderate
// pressure: V8 then marks its heap in small steps (incremental marking, run in its own tasks) and
// ends with a memory-reducing collection that shrinks the new space to its least and gives back
// free pages. Unlike LowMemoryNotification it does not collect at once: in a daemon with 100 tasks
// running, this call took 4 ms and LowMemoryNotification's collections 62 to 69 ms (measured).
napi_value js_reduce_heap(napi_env, napi_callback_info) {
  v8::Isolate *isolate = v8::Isolate::GetCurrent();
  if (isolate != nullptr) isolate->MemoryPressureNotification(v8::MemoryPressureLevel::kModerate);
  return nullptr;
}

// allocatedBytes() -> number. The bytes the calling thread's isolate has allocated in its new space
// since its first call (which starts the count: a callback at every collection's start and end).
// Exact across collections of either kind, which a reading of the new space alone is not.
napi_value js_allocated_bytes(napi_env env, napi_callback_info) {
  v8::Isolate *isolate = v8::Isolate::GetCurrent();
  void *data = nullptr;
  napi_get_instance_data(env, &data);
  auto *allocation = static_cast<Allocation *>(data);
  if (allocation == nullptr) {
    allocation = new Allocation();
    allocation->since = NewSpaceUsed(isolate);
    isolate->AddGCPrologueCallback(BeforeCollection, allocation);
    isolate->AddGCEpilogueCallback(AfterCollection, allocation);
    napi_set_instance_data(env, allocation, StopCounting, nullptr);
  }
  size_t used = NewSpaceUsed(isolate);
  double total = allocation->counted + (used > allocation->since ? used - allocation->since : 0);
  napi_value result;
  napi_create_double(env, total, &result);
  return result;
}

// trimMalloc() -> boolean. Gives the C library's free memory back to the kernel: glibc keeps what a
// thread freed in that thread's arena, and returns only a large free run at an arena's top by
// itself, so the buffers and native objects of many tasks, or of worker threads that have stopped,
// stay resident once freed. malloc_trim(0) releases every whole free page of every arena. true when
// something was released; false where the C library is not glibc (nothing to do there).
napi_value js_trim_malloc(napi_env env, napi_callback_info) {
  bool released = false;
#ifdef __GLIBC__
  released = malloc_trim(0) == 1;
#endif
  napi_value result;
  napi_get_boolean(env, released, &result);
  return result;
}
