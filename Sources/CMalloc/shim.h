// glibc's heap controls (malloc_trim), which Swift's Glibc module does not export.
#pragma once
#if defined(__linux__)
#include <malloc.h>
#endif
