// CPrefetch: a hint to the processor to start bringing a cache line toward the core before it is
// read — the compiler's __builtin_prefetch, which Swift cannot spell. DocStoreEngine's cursor
// uses it to start loading the next record of a run of consecutive lookups while the current one
// is read (Cursor.withValue). A hint only: it never faults, whatever the address, and changes no
// result.
#ifndef CPREFETCH_H
#define CPREFETCH_H

/// Asks for the cache line holding `address` to be loaded for reading.
static inline void docstore_prefetch(const void *address) { __builtin_prefetch(address, 0, 3); }

#endif
