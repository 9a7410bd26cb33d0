// Debian's libxml2 is built with ICU, and its encoding.h then includes the system's <unicode/*.h>, which
// clash with Foundation's own copy of ICU in one Swift module. Sluice never touches the ICU members of
// libxml2's structures (it only holds pointers to them), so the ICU declarations are left out.
#include <libxml/xmlversion.h>
#undef LIBXML_ICU_ENABLED
#include <libxml/parser.h>
#include <libxml/HTMLparser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>
#include <libxml/xmlreader.h>

// xmlFree is a global function pointer, which Swift 6's strict concurrency refuses to touch.
static inline void sluice_xml_free(void *pointer) { xmlFree(pointer); }

// Silences libxml2's default error printer for this thread (errors are read from the context instead).
static void sluice_xml_ignore_error(void *context, const char *message, ...) { (void)context; (void)message; }
static inline void sluice_xml_silence_errors(void) {
    xmlSetGenericErrorFunc(NULL, sluice_xml_ignore_error);
    xmlSetStructuredErrorFunc(NULL, NULL);
}
