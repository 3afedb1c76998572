// Hardware CRC32C (see include/CCRC32C.h). The register is the raw CRC state: the caller inverts
// it before and after, exactly as for the table-driven version, so both give identical results
// (checked by CRC32CTests against the software path and the standard check value). On x86-64
// with PCLMULQDQ, inputs of 384 bytes or more run as three interleaved streams, combined by
// carry-less multiplication: half the time of one stream on a page (a scan checks every leaf it
// reads from the file).
#include "CCRC32C.h"
#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>

int docstore_crc32c_hardware_available(void) {
    unsigned int eax, ebx, ecx, edx;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return 0;
    return (ecx & bit_SSE4_2) != 0;
}

// Whether the processor also has PCLMULQDQ, which combines three interleaved streams.
// Asked once; the answer is kept with relaxed atomics (threads that ask at once all compute the
// same answer, and a plain int would be a data race).
static int docstore_crc32c_has_clmul(void) {
    static int known = -1;
    int answer = __atomic_load_n(&known, __ATOMIC_RELAXED);
    if (answer < 0) {
        unsigned int eax, ebx, ecx, edx;
        answer = (__get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_PCLMUL) != 0) ? 1 : 0;
        __atomic_store_n(&known, answer, __ATOMIC_RELAXED);
    }
    return answer;
}

__attribute__((target("sse4.2")))
static uint64_t docstore_crc32c_serial(uint64_t c, const unsigned char *p, size_t length) {
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

// The raw register `c` advanced over n zero bytes, given k = x^(8n-33) mod P (bit-reflected):
// the carry-less product is c·k·x as the crc32 instruction reads 64 bits, and the instruction
// multiplies by x^32 and reduces, so the result is c·x^(8n) mod P.
__attribute__((target("sse4.2,pclmul")))
static uint64_t docstore_crc32c_shift(uint64_t c, uint32_t k) {
    __m128i product = _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)c), _mm_cvtsi32_si128((int)k), 0);
    return __builtin_ia32_crc32di(0, (uint64_t)_mm_cvtsi128_si64(product));
}

// Three streams of `block` bytes each (a multiple of 8) at once: the crc32 instruction takes
// three cycles to give its result but can start one every cycle, so one stream waits on
// itself and three keep it busy. With the state after A, B and C computed from c, 0 and 0,
// the state after A‖B‖C is shift(a, 2·block) ^ shift(b, block) ^ c (CRCs are linear).
__attribute__((target("sse4.2,pclmul")))
static uint64_t docstore_crc32c_interleaved(uint64_t c, const unsigned char **pp, size_t *lengthp,
                                            size_t block, uint32_t shiftOne, uint32_t shiftTwo) {
    const unsigned char *p = *pp;
    size_t length = *lengthp;
    while (length >= 3 * block) {
        uint64_t a = c, b = 0, d = 0;
        const unsigned char *end = p + block;
        while (p < end) {
            uint64_t wa, wb, wd;
            memcpy(&wa, p, 8);
            memcpy(&wb, p + block, 8);
            memcpy(&wd, p + 2 * block, 8);
            a = __builtin_ia32_crc32di(a, wa);
            b = __builtin_ia32_crc32di(b, wb);
            d = __builtin_ia32_crc32di(d, wd);
            p += 8;
        }
        c = docstore_crc32c_shift(a, shiftTwo) ^ docstore_crc32c_shift(b, shiftOne) ^ d;
        p += 2 * block;
        length -= 3 * block;
    }
    *pp = p;
    *lengthp = length;
    return c;
}

__attribute__((target("sse4.2")))
uint32_t docstore_crc32c_hardware(uint32_t crc, const void *bytes, size_t length) {
    const unsigned char *p = (const unsigned char *)bytes;
    uint64_t c = crc;
    if (length >= 3 * 128 && docstore_crc32c_has_clmul()) {
        // x^(8n-33) mod P, bit-reflected, for n = 1360, 2720, 128 and 256 bytes. A 4 KiB page's
        // checksummed 4092 bytes are three blocks of 1360 and 12 bytes more.
        c = docstore_crc32c_interleaved(c, &p, &length, 1360, 0x3f70cc6fu, 0x5aa1f3cfu);
        c = docstore_crc32c_interleaved(c, &p, &length, 128, 0x0d3b6092u, 0xb9e02b86u);
    }
    return (uint32_t)docstore_crc32c_serial(c, p, length);
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
