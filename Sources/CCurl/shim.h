#include <curl/curl.h>

/* curl_easy_setopt / curl_easy_getinfo are variadic: Swift cannot call them, so each argument type
   gets a typed wrapper. */
static inline CURLcode sluice_curl_setopt_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode sluice_curl_setopt_string(CURL *h, CURLoption o, const char *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode sluice_curl_setopt_pointer(CURL *h, CURLoption o, void *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode sluice_curl_setopt_slist(CURL *h, CURLoption o, struct curl_slist *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode sluice_curl_setopt_write_function(CURL *h, size_t (*f)(char *, size_t, size_t, void *)) {
    return curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, f);
}
static inline CURLcode sluice_curl_getinfo_long(CURL *h, CURLINFO i, long *v) { return curl_easy_getinfo(h, i, v); }
