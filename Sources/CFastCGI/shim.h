// libfcgi's reentrant API (fcgiapp.h) only: never fcgi_stdio.h, which redefines
// printf, FILE and stdin for the whole program.
#ifndef CFASTCGI_SHIM_H
#define CFASTCGI_SHIM_H
#include <fcgiapp.h>
#endif
