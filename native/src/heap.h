/* The addon's calls about memory, into V8 and the C library (heap.cc, C++): the rest of the addon is C. */
#ifndef HIVE_HEAP_H
#define HIVE_HEAP_H
#include <node_api.h>

#ifdef __cplusplus
extern "C" {
#endif

napi_value js_reduce_heap(napi_env env, napi_callback_info info);
napi_value js_allocated_bytes(napi_env env, napi_callback_info info);
napi_value js_trim_malloc(napi_env env, napi_callback_info info);

#ifdef __cplusplus
}
#endif
#endif
