#include <poppler.h>
#include <glib.h>
#include <cairo.h>
