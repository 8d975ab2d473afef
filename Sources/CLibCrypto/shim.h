// OpenSSL's libcrypto, for EVP_PBE_scrypt only: the support console's staff
// passwords are hashed with scrypt (a memory-hard password KDF), never with
// anything written here. libcrypto is already linked through libcurl.
#include <openssl/evp.h>
#include <openssl/crypto.h>
