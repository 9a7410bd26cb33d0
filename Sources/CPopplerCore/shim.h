// Poppler's core library (libpoppler-private-dev): only its include path and `-lpoppler` are used, by the
// C++ target CPopplerText. Its headers are C++, so nothing of it is imported into Swift.
#pragma once
#include <poppler-config.h>
