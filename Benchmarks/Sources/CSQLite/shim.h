// SQLite's C API (libsqlite3-dev: /usr/include/sqlite3.h), for the benchmark only.
#include <sqlite3.h>
