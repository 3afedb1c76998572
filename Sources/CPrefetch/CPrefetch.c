// The module is its header (a static inline function Swift imports and inlines); SwiftPM wants a
// C target to have a source file, and this is it.
#include "CPrefetch.h"
