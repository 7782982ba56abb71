// libpq, loaded with dlopen the first time a PostgreSQL store is opened (issue 19: linking
// it made every process, PostgreSQL or not, load and relocate libpq and the ~20 libraries it
// depends on — Kerberos, LDAP, GnuTLS — about 7 ms of a 4 KiB `compress`). Only
// postgres_store.cc uses it; the types come from libpq-fe.h, the code from libpq.so.5 at
// run time.
//
// Thread-safety: LoadLibPq may be called concurrently (std::call_once); the table is
// immutable afterwards.
#ifndef CAVEMAN_STORE_INTERNAL_LIBPQ_LOADER_H_
#define CAVEMAN_STORE_INTERNAL_LIBPQ_LOADER_H_

#include <libpq-fe.h>

#include <string>

namespace caveman::internal {

struct LibPq {
  decltype(&::PQconnectdbParams) PQconnectdbParams;
  decltype(&::PQconnectionNeedsPassword) PQconnectionNeedsPassword;
  decltype(&::PQclear) PQclear;
  decltype(&::PQerrorMessage) PQerrorMessage;
  decltype(&::PQexec) PQexec;
  decltype(&::PQexecParams) PQexecParams;
  decltype(&::PQfinish) PQfinish;
  decltype(&::PQgetisnull) PQgetisnull;
  decltype(&::PQgetlength) PQgetlength;
  decltype(&::PQgetvalue) PQgetvalue;
  decltype(&::PQntuples) PQntuples;
  decltype(&::PQresultErrorField) PQresultErrorField;
  decltype(&::PQresultStatus) PQresultStatus;
  decltype(&::PQsetNoticeProcessor) PQsetNoticeProcessor;
  decltype(&::PQstatus) PQstatus;
  decltype(&::PQtransactionStatus) PQtransactionStatus;
};

// The library's entry points, or nullptr when libpq.so.5 cannot be loaded or lacks one of
// them; then *error (if non-null) says why. The first outcome is kept for the process.
const LibPq* LoadLibPq(std::string* error);

}  // namespace caveman::internal

#endif  // CAVEMAN_STORE_INTERNAL_LIBPQ_LOADER_H_
