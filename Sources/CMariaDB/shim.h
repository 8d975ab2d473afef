// MariaDB Connector/C. mysql_optionsv is variadic and does not import into
// Swift: these typed wrappers set the options the service uses.
#ifndef CMARIADB_SHIM_H
#define CMARIADB_SHIM_H
#include <mysql.h>

static inline int CMariaDB_set_uint_option(MYSQL *mysql, enum mysql_option option, unsigned int value) {
    return mysql_optionsv(mysql, option, &value);
}

static inline int CMariaDB_set_bool_option(MYSQL *mysql, enum mysql_option option, int value) {
    my_bool flag = value ? 1 : 0;
    return mysql_optionsv(mysql, option, &flag);
}

static inline int CMariaDB_set_string_option(MYSQL *mysql, enum mysql_option option, const char *value) {
    return mysql_optionsv(mysql, option, value);
}

/// Asks mysql_stmt_store_result to compute max_length, so that result buffers fit.
static inline int CMariaDB_stmt_update_max_length(MYSQL_STMT *stmt) {
    my_bool flag = 1;
    return mysql_stmt_attr_set(stmt, STMT_ATTR_UPDATE_MAX_LENGTH, &flag);
}
#endif
