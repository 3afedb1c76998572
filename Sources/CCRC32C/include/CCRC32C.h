// CCRC32C: the CRC32C (Castagnoli) instruction of the processor, when it has one — SSE4.2 `crc32`
// on x86-64, the CRC extension's `crc32c` on 64-bit ARM — for DocStoreEngine's checksums
// (Sources/DocStoreEngine/Encoding/CRC32C.swift, which keeps the portable table-driven version
// and uses this only when `docstore_crc32c_hardware_available()` says so).
#ifndef CCRC32C_H
#define CCRC32C_H

#include <stddef.h>
#include <stdint.h>

/// 1 if this processor has a CRC32C instruction that `docstore_crc32c_hardware` uses, else 0.
int docstore_crc32c_hardware_available(void);

/// Advances the raw (pre-inverted) CRC32C register `crc` over `length` bytes at `bytes`.
/// Call only when `docstore_crc32c_hardware_available()` returned 1.
uint32_t docstore_crc32c_hardware(uint32_t crc, const void *bytes, size_t length);

#endif
