#include "store/internal/libpq_loader.h"

#include <dlfcn.h>

#include <mutex>

namespace caveman::internal {
namespace {

struct Loaded {
  LibPq api{};
  bool ok = false;
  std::string error;
};

template <class Fn>
bool Resolve(void* handle, const char* name, Fn* fn, std::string* error) {
  void* sym = dlsym(handle, name);
  if (sym == nullptr) {
    *error = std::string("libpq.so.5 has no ") + name;
    return false;
  }
  *fn = reinterpret_cast<Fn>(sym);
  return true;
}

Loaded LoadOnce() {
  Loaded out;
  // RTLD_LOCAL: libpq's own dependencies (libssl, libcrypto, ...) stay out of the global
  // scope, so they cannot interpose on anything this program links.
  void* handle = dlopen("libpq.so.5", RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    out.error = std::string("cannot load libpq.so.5: ") + (why != nullptr ? why : "unknown error");
    return out;
  }
  LibPq& a = out.api;
  out.ok = Resolve(handle, "PQconnectdbParams", &a.PQconnectdbParams, &out.error) &&
           Resolve(handle, "PQconnectionNeedsPassword", &a.PQconnectionNeedsPassword, &out.error) &&
           Resolve(handle, "PQclear", &a.PQclear, &out.error) &&
           Resolve(handle, "PQerrorMessage", &a.PQerrorMessage, &out.error) &&
           Resolve(handle, "PQexec", &a.PQexec, &out.error) &&
           Resolve(handle, "PQexecParams", &a.PQexecParams, &out.error) &&
           Resolve(handle, "PQfinish", &a.PQfinish, &out.error) &&
           Resolve(handle, "PQgetisnull", &a.PQgetisnull, &out.error) &&
           Resolve(handle, "PQgetlength", &a.PQgetlength, &out.error) &&
           Resolve(handle, "PQgetvalue", &a.PQgetvalue, &out.error) &&
           Resolve(handle, "PQntuples", &a.PQntuples, &out.error) &&
           Resolve(handle, "PQresultErrorField", &a.PQresultErrorField, &out.error) &&
           Resolve(handle, "PQresultStatus", &a.PQresultStatus, &out.error) &&
           Resolve(handle, "PQsetNoticeProcessor", &a.PQsetNoticeProcessor, &out.error) &&
           Resolve(handle, "PQstatus", &a.PQstatus, &out.error) &&
           Resolve(handle, "PQtransactionStatus", &a.PQtransactionStatus, &out.error);
  // The handle is never closed: connections may live until exit.
  return out;
}

}  // namespace

const LibPq* LoadLibPq(std::string* error) {
  static std::once_flag once;
  static Loaded* loaded = nullptr;  // never destroyed
  std::call_once(once, [] { loaded = new Loaded(LoadOnce()); });
  if (!loaded->ok) {
    if (error != nullptr) *error = loaded->error;
    return nullptr;
  }
  return &loaded->api;
}

}  // namespace caveman::internal
