// CLZ4: the C API of liblz4 (block format), reached only from DocStoreEngine/Compression/LZ4.swift.
#include <lz4.h>
