// LMDB's C API (liblmdb-dev: /usr/include/lmdb.h), for the benchmark only.
#include <lmdb.h>
