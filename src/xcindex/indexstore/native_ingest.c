/*
 * xcindex's compiled record ingester: read records through libIndexStore and write their
 * symbols, occurrences and relations straight into the SQLite mirror, with no Python
 * object per occurrence. Built on first use with the system C compiler (see native.py)
 * and loaded only by the ingestion worker process, never by the server: libIndexStore
 * aborts on some corrupt files, which must cost a worker.
 *
 * One call reads a batch of records into memory first, then writes them in one
 * transaction (BEGIN IMMEDIATE, so two workers take turns), so a crash while reading
 * leaves nothing written, and a record is either all there or absent.
 *
 * Neither libIndexStore's header (the toolchain ships none) nor sqlite3.h (no -dev package
 * needed) is included: the few declarations used are written here from their C APIs.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* --- libIndexStore (indexstore.h, API 0.15+, `_f` variants) ----------------------------- */
typedef void *indexstore_error_t;
typedef struct { const char *data; size_t length; } indexstore_string_ref_t;
typedef void *indexstore_t;
typedef void *indexstore_symbol_t;
typedef void *indexstore_symbol_relation_t;
typedef void *indexstore_occurrence_t;
typedef void *indexstore_record_reader_t;

const char *indexstore_error_get_description(indexstore_error_t);
void indexstore_error_dispose(indexstore_error_t);
int indexstore_symbol_get_language(indexstore_symbol_t);
int indexstore_symbol_get_kind(indexstore_symbol_t);
int indexstore_symbol_get_subkind(indexstore_symbol_t);
uint64_t indexstore_symbol_get_properties(indexstore_symbol_t);
indexstore_string_ref_t indexstore_symbol_get_name(indexstore_symbol_t);
indexstore_string_ref_t indexstore_symbol_get_usr(indexstore_symbol_t);
uint64_t indexstore_symbol_relation_get_roles(indexstore_symbol_relation_t);
indexstore_symbol_t indexstore_symbol_relation_get_symbol(indexstore_symbol_relation_t);
indexstore_symbol_t indexstore_occurrence_get_symbol(indexstore_occurrence_t);
bool indexstore_occurrence_relations_apply_f(indexstore_occurrence_t, void *context,
                                             bool (*applier)(void *context, indexstore_symbol_relation_t));
uint64_t indexstore_occurrence_get_roles(indexstore_occurrence_t);
void indexstore_occurrence_get_line_col(indexstore_occurrence_t, unsigned *line, unsigned *column);
indexstore_record_reader_t indexstore_record_reader_create(indexstore_t, const char *record_name,
                                                           indexstore_error_t *error);
void indexstore_record_reader_dispose(indexstore_record_reader_t);
bool indexstore_record_reader_symbols_apply_f(indexstore_record_reader_t, bool nocache, void *context,
                                              bool (*applier)(void *context, indexstore_symbol_t));
bool indexstore_record_reader_occurrences_apply_f(indexstore_record_reader_t, void *context,
                                                  bool (*applier)(void *context, indexstore_occurrence_t));

/* --- SQLite (sqlite3.h) ------------------------------------------------------------------ */
typedef struct sqlite3 sqlite3;
typedef struct sqlite3_stmt sqlite3_stmt;
int sqlite3_open_v2(const char *filename, sqlite3 **db, int flags, const char *vfs);
int sqlite3_close(sqlite3 *);
int sqlite3_exec(sqlite3 *, const char *sql, int (*callback)(void *, int, char **, char **), void *, char **);
int sqlite3_prepare_v2(sqlite3 *, const char *sql, int bytes, sqlite3_stmt **, const char **tail);
int sqlite3_bind_int64(sqlite3_stmt *, int, long long);
int sqlite3_bind_text(sqlite3_stmt *, int, const char *, int, void (*)(void *));
int sqlite3_step(sqlite3_stmt *);
int sqlite3_reset(sqlite3_stmt *);
int sqlite3_finalize(sqlite3_stmt *);
long long sqlite3_column_int64(sqlite3_stmt *, int);
long long sqlite3_last_insert_rowid(sqlite3 *);
const char *sqlite3_errmsg(sqlite3 *);
int sqlite3_busy_handler(sqlite3 *, int (*)(void *, int), void *);
#define SQLITE_OK 0
#define SQLITE_ROW 100
#define SQLITE_DONE 101
#define SQLITE_OPEN_READWRITE 0x00000002
#define SQLITE_STATIC ((void (*)(void *))0)

#define XCI_ABI_VERSION 3
#define PARAMETER_KIND 25
#define PROPERTY_LOCAL (1u << 7)
#define ROLE_DECLARATION 1u
#define ROLE_DEFINITION 2u

/* --- growable arrays ---------------------------------------------------------------------- */

static void *grow(void *items, size_t *capacity, size_t needed, size_t size) {
    if (needed <= *capacity) return items;
    size_t next = *capacity ? *capacity : 256;
    while (next < needed) next *= 2;
    void *moved = realloc(items, next * size);
    if (!moved) return NULL;
    *capacity = next;
    return moved;
}

/* --- symbols: interned by USR for the life of the process (ids are the database's) ----- */

typedef struct {
    char *usr;
    char *name;
    uint32_t usr_len, name_len;
    uint64_t hash;
    int kind, subkind, language;
    uint64_t properties;
    long long db_id; /* 0 until resolved in the database */
} symbol_t;

static symbol_t *symbols;
static size_t symbol_count, symbol_capacity;
static uint32_t *usr_slots; /* open addressing: index + 1, 0 = empty */
static size_t usr_slot_count;

static uint64_t hash_bytes(const char *data, size_t length) {
    uint64_t hash = 14695981039346656037ULL; /* FNV-1a 64 (model.usr_hash) */
    for (size_t i = 0; i < length; i++) hash = (hash ^ (unsigned char)data[i]) * 1099511628211ULL;
    return hash;
}

static bool rehash(size_t slots) {
    uint32_t *fresh = calloc(slots, sizeof(uint32_t));
    if (!fresh) return false;
    for (size_t i = 0; i < symbol_count; i++) {
        size_t at = symbols[i].hash & (slots - 1);
        while (fresh[at]) at = (at + 1) & (slots - 1);
        fresh[at] = (uint32_t)(i + 1);
    }
    free(usr_slots);
    usr_slots = fresh;
    usr_slot_count = slots;
    return true;
}

static void forget_symbols(void) {
    for (size_t i = 0; i < symbol_count; i++) {
        free(symbols[i].usr);
        free(symbols[i].name);
    }
    symbol_count = 0;
    if (usr_slots) memset(usr_slots, 0, usr_slot_count * sizeof(uint32_t));
}

static char *copy_text(const char *data, size_t length) {
    char *out = malloc(length + 1);
    if (out) {
        memcpy(out, data, length);
        out[length] = '\0';
    }
    return out;
}

/* The index of the symbol with this handle's USR, interning it; -1 when out of memory. */
static long intern_symbol(indexstore_symbol_t symbol) {
    indexstore_string_ref_t usr = indexstore_symbol_get_usr(symbol);
    uint64_t hash = hash_bytes(usr.data, usr.length);
    if ((symbol_count + 1) * 2 > usr_slot_count && !rehash(usr_slot_count ? usr_slot_count * 2 : 4096)) return -1;
    size_t at = hash & (usr_slot_count - 1);
    while (usr_slots[at]) {
        symbol_t *known = &symbols[usr_slots[at] - 1];
        if (known->hash == hash && known->usr_len == usr.length && !memcmp(known->usr, usr.data, usr.length))
            return (long)(usr_slots[at] - 1);
        at = (at + 1) & (usr_slot_count - 1);
    }
    symbols = grow(symbols, &symbol_capacity, symbol_count + 1, sizeof(symbol_t));
    if (!symbols) return -1;
    indexstore_string_ref_t name = indexstore_symbol_get_name(symbol);
    symbol_t *entry = &symbols[symbol_count];
    entry->usr = copy_text(usr.data, usr.length);
    entry->name = copy_text(name.data, name.length);
    if (!entry->usr || !entry->name) return -1;
    entry->usr_len = (uint32_t)usr.length;
    entry->name_len = (uint32_t)name.length;
    entry->hash = hash;
    entry->kind = indexstore_symbol_get_kind(symbol);
    entry->subkind = indexstore_symbol_get_subkind(symbol);
    entry->language = indexstore_symbol_get_language(symbol);
    entry->properties = indexstore_symbol_get_properties(symbol);
    entry->db_id = 0;
    usr_slots[at] = (uint32_t)(symbol_count + 1);
    return (long)symbol_count++;
}

/* --- one batch read into memory ----------------------------------------------------------- */

typedef struct { uint32_t symbol; uint32_t line, column; uint64_t roles; uint32_t first_relation, relations; } occurrence_t;
typedef struct { uint64_t roles; uint32_t symbol; } relation_t;

typedef struct {
    /* per record handle → symbol index (handles are stable while the reader caches) */
    uintptr_t *handle_keys;
    uint32_t *handle_values;
    size_t handle_slots, handle_count;
    occurrence_t *occurrences;
    size_t occurrence_count, occurrence_capacity;
    relation_t *relations;
    size_t relation_count, relation_capacity;
    bool failed; /* out of memory */
} batch_t;

static long symbol_of(batch_t *batch, indexstore_symbol_t symbol) {
    uintptr_t key = (uintptr_t)symbol;
    if ((batch->handle_count + 1) * 2 > batch->handle_slots) {
        size_t slots = batch->handle_slots ? batch->handle_slots * 2 : 1024;
        uintptr_t *keys = calloc(slots, sizeof(uintptr_t));
        uint32_t *values = calloc(slots, sizeof(uint32_t));
        if (!keys || !values) {
            free(keys);
            free(values);
            return -1;
        }
        for (size_t i = 0; i < batch->handle_slots; i++) {
            if (!batch->handle_keys[i]) continue;
            size_t at = (batch->handle_keys[i] >> 4) & (slots - 1);
            while (keys[at]) at = (at + 1) & (slots - 1);
            keys[at] = batch->handle_keys[i];
            values[at] = batch->handle_values[i];
        }
        free(batch->handle_keys);
        free(batch->handle_values);
        batch->handle_keys = keys;
        batch->handle_values = values;
        batch->handle_slots = slots;
    }
    size_t at = (key >> 4) & (batch->handle_slots - 1);
    while (batch->handle_keys[at]) {
        if (batch->handle_keys[at] == key) return batch->handle_values[at];
        at = (at + 1) & (batch->handle_slots - 1);
    }
    long index = intern_symbol(symbol);
    if (index < 0) return -1;
    batch->handle_keys[at] = key;
    batch->handle_values[at] = (uint32_t)index;
    batch->handle_count++;
    return index;
}

static void forget_handles(batch_t *batch) {
    if (batch->handle_keys) memset(batch->handle_keys, 0, batch->handle_slots * sizeof(uintptr_t));
    batch->handle_count = 0;
}

static bool on_symbol(void *context, indexstore_symbol_t symbol) {
    batch_t *batch = context;
    if (symbol_of(batch, symbol) < 0) batch->failed = true;
    return !batch->failed;
}

static bool on_relation(void *context, indexstore_symbol_relation_t relation) {
    batch_t *batch = context;
    long symbol = symbol_of(batch, indexstore_symbol_relation_get_symbol(relation));
    batch->relations = grow(batch->relations, &batch->relation_capacity, batch->relation_count + 1, sizeof(relation_t));
    if (symbol < 0 || !batch->relations) {
        batch->failed = true;
        return false;
    }
    batch->relations[batch->relation_count++] =
        (relation_t){indexstore_symbol_relation_get_roles(relation), (uint32_t)symbol};
    return true;
}

static bool on_occurrence(void *context, indexstore_occurrence_t occurrence) {
    batch_t *batch = context;
    long symbol = symbol_of(batch, indexstore_occurrence_get_symbol(occurrence));
    batch->occurrences =
        grow(batch->occurrences, &batch->occurrence_capacity, batch->occurrence_count + 1, sizeof(occurrence_t));
    if (symbol < 0 || !batch->occurrences) {
        batch->failed = true;
        return false;
    }
    occurrence_t *entry = &batch->occurrences[batch->occurrence_count++];
    unsigned line = 0, column = 0;
    indexstore_occurrence_get_line_col(occurrence, &line, &column);
    entry->symbol = (uint32_t)symbol;
    entry->line = line;
    entry->column = column;
    entry->roles = indexstore_occurrence_get_roles(occurrence);
    entry->first_relation = (uint32_t)batch->relation_count;
    /* A use of a parameter or a local keeps no relations (model.keeps_relations). */
    const symbol_t *of = &symbols[symbol];
    bool local = of->kind == PARAMETER_KIND || (of->properties & PROPERTY_LOCAL);
    if (!local || (entry->roles & (ROLE_DEFINITION | ROLE_DECLARATION)))
        indexstore_occurrence_relations_apply_f(occurrence, batch, on_relation);
    entry->relations = (uint32_t)(batch->relation_count - entry->first_relation);
    return !batch->failed;
}

/* --- the database ------------------------------------------------------------------------- */

enum {
    FIND_SYMBOL, ADD_SYMBOL, HAS_RECORD, ADD_RECORD, CLEAR_FAILURE, ADD_OCCURRENCE, ADD_RELATION, SET_RANGE,
    STATEMENTS
};
/* Symbols are found by the FNV-1a hash of their USR (the same as model.usr_hash, as SQLite's
 * signed 64-bit integer), then the USR itself; a record's occurrences get one contiguous id
 * range, stored on the record (the database has no index of occurrences by record). */
static const char *const SQL[STATEMENTS] = {
    "SELECT id FROM symbols WHERE usr_hash = ? AND usr = ?",
    "INSERT INTO symbols(usr, usr_hash, name, kind, subkind, language, properties) VALUES (?,?,?,?,?,?,?)",
    "SELECT 1 FROM records WHERE name = ?",
    "INSERT INTO records(name) VALUES (?)",
    "DELETE FROM failures WHERE name = ?",
    "INSERT INTO occurrences(record_id, symbol_id, roles, line, col) VALUES (?,?,?,?,?)",
    "INSERT OR IGNORE INTO relations(occurrence_id, roles, symbol_id) VALUES (?,?,?)",
    "UPDATE records SET first_occurrence = ?, last_occurrence = ? WHERE id = ?",
};

static sqlite3 *db;
static sqlite3_stmt *statements[STATEMENTS];
static char *db_path;
static long long db_token;

/* Wait for the other worker's transaction in steps of a fifth of a millisecond (SQLite's
 * own busy timeout sleeps up to 100 ms at a time, which leaves a core idle between two
 * batches), for up to two minutes. */
static int on_busy(void *context, int attempts) {
    (void)context;
    if (attempts > 600000) return 0;
    struct timespec pause = {0, 200000};
    nanosleep(&pause, NULL);
    return 1;
}

static void close_database(void) {
    for (int i = 0; i < STATEMENTS; i++) {
        if (statements[i]) sqlite3_finalize(statements[i]);
        statements[i] = NULL;
    }
    if (db) sqlite3_close(db);
    db = NULL;
    free(db_path);
    db_path = NULL;
}

static void fail(char *error, size_t error_size, const char *what) {
    snprintf(error, error_size, "%s: %s", what, db ? sqlite3_errmsg(db) : "no database");
}

/* Open (or keep) the connection; a new token means a new database file: forget every id. */
static bool open_database(const char *path, long long token, char *error, size_t error_size) {
    if (db && db_token == token && db_path && !strcmp(db_path, path)) return true;
    close_database();
    forget_symbols();
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
        fail(error, error_size, "cannot open the database");
        close_database();
        return false;
    }
    sqlite3_busy_handler(db, on_busy, NULL);
    sqlite3_exec(db, "PRAGMA synchronous=NORMAL; PRAGMA cache_size=-32768; PRAGMA temp_store=MEMORY; PRAGMA wal_autocheckpoint=0", NULL, NULL,
                 NULL);
    for (int i = 0; i < STATEMENTS; i++) {
        if (sqlite3_prepare_v2(db, SQL[i], -1, &statements[i], NULL) != SQLITE_OK) {
            fail(error, error_size, "cannot prepare a statement");
            close_database();
            return false;
        }
    }
    db_path = copy_text(path, strlen(path));
    db_token = token;
    return db_path != NULL;
}

/* Run a prepared statement to completion; returns the first column of its first row (or 0). */
static bool step(int which, long long *first, char *error, size_t error_size) {
    sqlite3_stmt *statement = statements[which];
    int status = sqlite3_step(statement);
    if (first) *first = status == SQLITE_ROW ? sqlite3_column_int64(statement, 0) : 0;
    while (status == SQLITE_ROW) status = sqlite3_step(statement);
    sqlite3_reset(statement);
    if (status != SQLITE_DONE) {
        fail(error, error_size, SQL[which]);
        return false;
    }
    return true;
}

static bool resolve_symbol(symbol_t *symbol, char *error, size_t error_size) {
    if (symbol->db_id) return true;
    sqlite3_stmt *find = statements[FIND_SYMBOL];
    sqlite3_bind_int64(find, 1, (long long)symbol->hash);
    sqlite3_bind_text(find, 2, symbol->usr, (int)symbol->usr_len, SQLITE_STATIC);
    if (!step(FIND_SYMBOL, &symbol->db_id, error, error_size)) return false;
    if (symbol->db_id) return true;
    sqlite3_stmt *add = statements[ADD_SYMBOL];
    sqlite3_bind_text(add, 1, symbol->usr, (int)symbol->usr_len, SQLITE_STATIC);
    sqlite3_bind_int64(add, 2, (long long)symbol->hash);
    sqlite3_bind_text(add, 3, symbol->name, (int)symbol->name_len, SQLITE_STATIC);
    sqlite3_bind_int64(add, 4, symbol->kind);
    sqlite3_bind_int64(add, 5, symbol->subkind);
    sqlite3_bind_int64(add, 6, symbol->language);
    sqlite3_bind_int64(add, 7, (long long)symbol->properties);
    if (!step(ADD_SYMBOL, NULL, error, error_size)) return false;
    symbol->db_id = sqlite3_last_insert_rowid(db);
    return true;
}

/* --- the entry points --------------------------------------------------------------------- */

int xci_abi_version(void) { return XCI_ABI_VERSION; }

/*
 * Read `count` records and write those not yet in the database. statuses[i]: 0 written,
 * 1 already present, 2 unreadable (libIndexStore's message in messages + i * message_size).
 * totals: occurrences and relations written. Returns 0, or -1 with `error` set (nothing of
 * the batch is written then).
 */
int xci_ingest_records(indexstore_t store, const char *database, long long token, int count,
                       const char *const *names, int *statuses, char *messages, size_t message_size,
                       long long *totals, char *error, size_t error_size) {
    error[0] = '\0';
    totals[0] = totals[1] = 0;
    if (!open_database(database, token, error, error_size)) return -1;

    batch_t batch = {0};
    size_t *first_occurrence = calloc((size_t)count + 1, sizeof(size_t));
    if (!first_occurrence) {
        snprintf(error, error_size, "out of memory");
        return -1;
    }
    for (int i = 0; i < count; i++) {
        first_occurrence[i] = batch.occurrence_count;
        statuses[i] = 0;
        indexstore_error_t failure = NULL;
        indexstore_record_reader_t reader = indexstore_record_reader_create(store, names[i], &failure);
        if (!reader) {
            statuses[i] = 2;
            snprintf(messages + (size_t)i * message_size, message_size, "cannot read record '%s': %s", names[i],
                     failure ? indexstore_error_get_description(failure) : "unknown error");
            if (failure) indexstore_error_dispose(failure);
            continue;
        }
        forget_handles(&batch);
        /* Caching the declarations (nocache = false) keeps symbol handles stable. */
        indexstore_record_reader_symbols_apply_f(reader, false, &batch, on_symbol);
        indexstore_record_reader_occurrences_apply_f(reader, &batch, on_occurrence);
        indexstore_record_reader_dispose(reader);
        if (batch.failed) break;
    }
    first_occurrence[count] = batch.occurrence_count;

    int result = 0;
    if (batch.failed) {
        snprintf(error, error_size, "out of memory while reading records");
        result = -1;
    } else if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
        fail(error, error_size, "cannot begin a transaction");
        result = -1;
    } else {
        for (int i = 0; i < count && result == 0; i++) {
            if (statuses[i] != 0) continue;
            long long present = 0;
            sqlite3_bind_text(statements[HAS_RECORD], 1, names[i], -1, SQLITE_STATIC);
            if (!step(HAS_RECORD, &present, error, error_size)) { result = -1; break; }
            if (present) { statuses[i] = 1; continue; }
            sqlite3_bind_text(statements[ADD_RECORD], 1, names[i], -1, SQLITE_STATIC);
            if (!step(ADD_RECORD, NULL, error, error_size)) { result = -1; break; }
            long long record_id = sqlite3_last_insert_rowid(db);
            /* Read at last (a rebuild or a repaired file): no longer unreadable. */
            sqlite3_bind_text(statements[CLEAR_FAILURE], 1, names[i], -1, SQLITE_STATIC);
            if (!step(CLEAR_FAILURE, NULL, error, error_size)) { result = -1; break; }
            long long first_id = 0, last_id = -1;
            for (size_t o = first_occurrence[i]; o < first_occurrence[i + 1]; o++) {
                occurrence_t *occ = &batch.occurrences[o];
                symbol_t *symbol = &symbols[occ->symbol];
                if (!resolve_symbol(symbol, error, error_size)) { result = -1; break; }
                sqlite3_stmt *add = statements[ADD_OCCURRENCE];
                sqlite3_bind_int64(add, 1, record_id);
                sqlite3_bind_int64(add, 2, symbol->db_id);
                sqlite3_bind_int64(add, 3, (long long)occ->roles);
                sqlite3_bind_int64(add, 4, occ->line);
                sqlite3_bind_int64(add, 5, occ->column);
                if (!step(ADD_OCCURRENCE, NULL, error, error_size)) { result = -1; break; }
                long long occurrence_id = sqlite3_last_insert_rowid(db);
                if (o == first_occurrence[i]) first_id = occurrence_id;
                last_id = occurrence_id;
                totals[0]++;
                /* In the relations table's key order (occurrence, symbol, roles): rows then
                 * only ever append to its last page, which stays full (out-of-order rows
                 * split pages half-empty: 12 % of the table at L). */
                uint32_t first = occ->first_relation, end = occ->first_relation + occ->relations;
                for (uint32_t r = first; r < end && result == 0; r++) {
                    if (!resolve_symbol(&symbols[batch.relations[r].symbol], error, error_size)) result = -1;
                }
                if (result) break;
                for (uint32_t r = first + 1; r < end; r++) {
                    relation_t moving = batch.relations[r];
                    long long key = symbols[moving.symbol].db_id;
                    uint32_t at = r;
                    while (at > first && (symbols[batch.relations[at - 1].symbol].db_id > key ||
                                          (symbols[batch.relations[at - 1].symbol].db_id == key &&
                                           batch.relations[at - 1].roles > moving.roles))) {
                        batch.relations[at] = batch.relations[at - 1];
                        at--;
                    }
                    batch.relations[at] = moving;
                }
                for (uint32_t r = first; r < end; r++) {
                    relation_t *relation = &batch.relations[r];
                    sqlite3_stmt *rel = statements[ADD_RELATION];
                    sqlite3_bind_int64(rel, 1, occurrence_id);
                    sqlite3_bind_int64(rel, 2, (long long)relation->roles);
                    sqlite3_bind_int64(rel, 3, symbols[relation->symbol].db_id);
                    if (!step(ADD_RELATION, NULL, error, error_size)) { result = -1; break; }
                    totals[1]++;
                }
                if (result) break;
            }
            if (result == 0 && first_id != 0) {
                sqlite3_stmt *range = statements[SET_RANGE];
                sqlite3_bind_int64(range, 1, first_id);
                sqlite3_bind_int64(range, 2, last_id);
                sqlite3_bind_int64(range, 3, record_id);
                if (!step(SET_RANGE, NULL, error, error_size)) result = -1;
            }
        }
        if (result == 0 && sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
            fail(error, error_size, "cannot commit");
            result = -1;
        }
        if (result != 0) sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    }
    if (result != 0) {
        /* Ids handed out in a rolled-back transaction are not the database's. */
        forget_symbols();
        totals[0] = totals[1] = 0;
    }
    free(first_occurrence);
    free(batch.handle_keys);
    free(batch.handle_values);
    free(batch.occurrences);
    free(batch.relations);
    return result;
}

/* Close the connection (the worker is going away, or the database was replaced). */
void xci_close(void) {
    close_database();
    forget_symbols();
}
