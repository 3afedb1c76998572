// Hardware CRC32C (see include/CCRC32C.h). The register is the raw CRC state: the caller inverts
// it before and after, exactly as for the table-driven version, so both give identical results
// (checked by CRC32CTests against the software path and the standard check value).
#include "CCRC32C.h"
#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>

int docstore_crc32c_hardware_available(void) {
    unsigned int eax, ebx, ecx, edx;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return 0;
    return (ecx & bit_SSE4_2) != 0;
}

__attribute__((target("sse4.2")))
uint32_t docstore_crc32c_hardware(uint32_t crc, const void *bytes, size_t length) {
    const unsigned char *p = (const unsigned char *)bytes;
    uint64_t c = crc;
    while (length >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        c = __builtin_ia32_crc32di(c, word);
        p += 8;
        length -= 8;
    }
    uint32_t c32 = (uint32_t)c;
    while (length > 0) {
        c32 = __builtin_ia32_crc32qi(c32, *p);
        p += 1;
        length -= 1;
    }
    return c32;
}

#elif defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#include <asm/hwcap.h>

int docstore_crc32c_hardware_available(void) {
    return (getauxval(AT_HWCAP) & HWCAP_CRC32) != 0;
}

__attribute__((target("crc")))
uint32_t docstore_crc32c_hardware(uint32_t crc, const void *bytes, size_t length) {
    const unsigned char *p = (const unsigned char *)bytes;
    while (length >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        crc = __builtin_arm_crc32cd(crc, word);
        p += 8;
        length -= 8;
    }
    while (length > 0) {
        crc = __builtin_arm_crc32cb(crc, *p);
        p += 1;
        length -= 1;
    }
    return crc;
}

#else

int docstore_crc32c_hardware_available(void) { return 0; }

uint32_t docstore_crc32c_hardware(uint32_t crc, const void *bytes, size_t length) {
    (void)bytes;
    (void)length;
    return crc;
}

#endif
