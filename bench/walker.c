/*
 * The limit: walk every unit, record, occurrence and relation of an index store through
 * libIndexStore, doing the least work a reader must do (read each occurrence's symbol USR
 * and name, roles, line and column, and each relation's roles and symbol USR), and report
 * how fast that is. xcindex's cold ingestion is measured against this rate.
 *
 * Usage: walker STORE_PATH [--scope user|all] [--threads N]
 *   --scope user  (default) the records of non-system units that have a main file: the
 *                 same set xcindex ingests (system-module records are read only if needed).
 *   --scope all   every record of every unit, system modules included.
 * Prints one JSON object on stdout.
 *
 * The toolchain ships libIndexStore.so without its header, so the few declarations needed
 * are written here from the C API (indexstore.h, API 0.15+), `_f` variants only.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef void *indexstore_error_t;
typedef struct { const char *data; size_t length; } indexstore_string_ref_t;
typedef void *indexstore_t;
typedef void *indexstore_symbol_t;
typedef void *indexstore_symbol_relation_t;
typedef void *indexstore_occurrence_t;
typedef void *indexstore_record_reader_t;
typedef void *indexstore_unit_reader_t;
typedef void *indexstore_unit_dependency_t;

const char *indexstore_error_get_description(indexstore_error_t);
void indexstore_error_dispose(indexstore_error_t);
unsigned indexstore_version(void);
indexstore_t indexstore_store_create(const char *store_path, indexstore_error_t *error);
void indexstore_store_dispose(indexstore_t);
bool indexstore_store_units_apply_f(indexstore_t, unsigned sorted, void *context,
                                    bool (*applier)(void *context, indexstore_string_ref_t unit_name));
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
indexstore_unit_reader_t indexstore_unit_reader_create(indexstore_t, const char *unit_name,
                                                       indexstore_error_t *error);
void indexstore_unit_reader_dispose(indexstore_unit_reader_t);
bool indexstore_unit_reader_is_system_unit(indexstore_unit_reader_t);
indexstore_string_ref_t indexstore_unit_reader_get_main_file(indexstore_unit_reader_t);
int indexstore_unit_dependency_get_kind(indexstore_unit_dependency_t);
indexstore_string_ref_t indexstore_unit_dependency_get_name(indexstore_unit_dependency_t);
bool indexstore_unit_reader_dependencies_apply_f(indexstore_unit_reader_t, void *context,
                                                 bool (*applier)(void *context, indexstore_unit_dependency_t));

enum { DEPENDENCY_RECORD = 2 };

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char *copy_ref(indexstore_string_ref_t ref) {
    char *out = malloc(ref.length + 1);
    if (!out) { perror("malloc"); exit(2); }
    memcpy(out, ref.data, ref.length);
    out[ref.length] = '\0';
    return out;
}

/* --- units ------------------------------------------------------------------------- */

typedef struct { char **items; size_t count, capacity; } names_t;

static void names_push(names_t *names, char *name) {
    if (names->count == names->capacity) {
        names->capacity = names->capacity ? names->capacity * 2 : 256;
        names->items = realloc(names->items, names->capacity * sizeof(char *));
        if (!names->items) { perror("realloc"); exit(2); }
    }
    names->items[names->count++] = name;
}

typedef struct { char *name; bool user; } record_ref_t;
typedef struct { record_ref_t *items; size_t count, capacity; bool user; uint64_t dependencies; } records_t;

static bool on_unit_name(void *context, indexstore_string_ref_t name) {
    names_push((names_t *)context, copy_ref(name));
    return true;
}

static bool on_dependency(void *context, indexstore_unit_dependency_t dep) {
    records_t *records = context;
    records->dependencies++;
    if (indexstore_unit_dependency_get_kind(dep) != DEPENDENCY_RECORD) return true;
    if (records->count == records->capacity) {
        records->capacity = records->capacity ? records->capacity * 2 : 1024;
        records->items = realloc(records->items, records->capacity * sizeof(record_ref_t));
        if (!records->items) { perror("realloc"); exit(2); }
    }
    records->items[records->count].name = copy_ref(indexstore_unit_dependency_get_name(dep));
    records->items[records->count].user = records->user;
    records->count++;
    return true;
}

static int by_name(const void *a, const void *b) {
    return strcmp(((const record_ref_t *)a)->name, ((const record_ref_t *)b)->name);
}

/* --- records ----------------------------------------------------------------------- */

typedef struct {
    indexstore_t store;
    record_ref_t *records;
    size_t count, stride, first;
    uint64_t records_read, symbols, occurrences, relations, touched_bytes, failures;
} walk_t;

static bool on_symbol(void *context, indexstore_symbol_t symbol) {
    walk_t *walk = context;
    walk->symbols++;
    walk->touched_bytes += indexstore_symbol_get_usr(symbol).length + indexstore_symbol_get_name(symbol).length;
    return true;
}

static bool on_relation(void *context, indexstore_symbol_relation_t relation) {
    walk_t *walk = context;
    walk->relations++;
    walk->touched_bytes += indexstore_symbol_relation_get_roles(relation) & 1;
    walk->touched_bytes += indexstore_symbol_get_usr(indexstore_symbol_relation_get_symbol(relation)).length;
    return true;
}

static bool on_occurrence(void *context, indexstore_occurrence_t occurrence) {
    walk_t *walk = context;
    unsigned line = 0, column = 0;
    indexstore_symbol_t symbol = indexstore_occurrence_get_symbol(occurrence);
    walk->occurrences++;
    walk->touched_bytes += indexstore_symbol_get_usr(symbol).length + indexstore_symbol_get_name(symbol).length;
    walk->touched_bytes += indexstore_occurrence_get_roles(occurrence) & 1;
    indexstore_occurrence_get_line_col(occurrence, &line, &column);
    walk->touched_bytes += (line + column) & 1;
    indexstore_occurrence_relations_apply_f(occurrence, walk, on_relation);
    return true;
}

static void *walk_records(void *argument) {
    walk_t *walk = argument;
    for (size_t i = walk->first; i < walk->count; i += walk->stride) {
        indexstore_error_t error = NULL;
        indexstore_record_reader_t reader = indexstore_record_reader_create(walk->store, walk->records[i].name, &error);
        if (!reader) {
            walk->failures++;
            if (error) indexstore_error_dispose(error);
            continue;
        }
        indexstore_record_reader_symbols_apply_f(reader, false, walk, on_symbol);
        indexstore_record_reader_occurrences_apply_f(reader, walk, on_occurrence);
        indexstore_record_reader_dispose(reader);
        walk->records_read++;
    }
    return NULL;
}

int main(int argc, char **argv) {
    const char *store_path = NULL;
    bool user_only = true;
    long threads = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--scope") && i + 1 < argc) {
            user_only = strcmp(argv[++i], "all") != 0;
        } else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
            threads = strtol(argv[++i], NULL, 10);
        } else {
            store_path = argv[i];
        }
    }
    if (!store_path || threads < 1 || threads > 64) {
        fprintf(stderr, "usage: %s STORE_PATH [--scope user|all] [--threads N]\n", argv[0]);
        return 2;
    }

    double started = now_s();
    indexstore_error_t error = NULL;
    indexstore_t store = indexstore_store_create(store_path, &error);
    if (!store) {
        fprintf(stderr, "cannot open %s: %s\n", store_path, error ? indexstore_error_get_description(error) : "?");
        return 1;
    }

    names_t units = {0};
    indexstore_store_units_apply_f(store, 0, &units, on_unit_name);
    records_t records = {0};
    uint64_t system_units = 0, unit_failures = 0;
    for (size_t i = 0; i < units.count; i++) {
        indexstore_unit_reader_t reader = indexstore_unit_reader_create(store, units.items[i], &error);
        if (!reader) {
            unit_failures++;
            if (error) indexstore_error_dispose(error);
            error = NULL;
            continue;
        }
        bool system = indexstore_unit_reader_is_system_unit(reader);
        system_units += system;
        records.user = !system && indexstore_unit_reader_get_main_file(reader).length > 0;
        if (records.user || !user_only) {
            indexstore_unit_reader_dependencies_apply_f(reader, &records, on_dependency);
        }
        indexstore_unit_reader_dispose(reader);
    }
    /* A record shared by several units (a system module's, say) is walked once. */
    qsort(records.items, records.count, sizeof(record_ref_t), by_name);
    size_t unique = 0;
    for (size_t i = 0; i < records.count; i++) {
        if (unique && !strcmp(records.items[unique - 1].name, records.items[i].name)) {
            records.items[unique - 1].user |= records.items[i].user;
            free(records.items[i].name);
        } else {
            records.items[unique++] = records.items[i];
        }
    }
    double units_done = now_s();

    walk_t *walks = calloc((size_t)threads, sizeof(walk_t));
    pthread_t *ids = calloc((size_t)threads, sizeof(pthread_t));
    for (long t = 0; t < threads; t++) {
        walks[t] = (walk_t){.store = store, .records = records.items, .count = unique, .stride = (size_t)threads,
                            .first = (size_t)t};
        if (threads == 1) {
            walk_records(&walks[t]);
        } else if (pthread_create(&ids[t], NULL, walk_records, &walks[t])) {
            perror("pthread_create");
            return 2;
        }
    }
    walk_t total = {0};
    for (long t = 0; t < threads; t++) {
        if (threads > 1) pthread_join(ids[t], NULL);
        total.records_read += walks[t].records_read;
        total.symbols += walks[t].symbols;
        total.occurrences += walks[t].occurrences;
        total.relations += walks[t].relations;
        total.touched_bytes += walks[t].touched_bytes;
        total.failures += walks[t].failures;
    }
    double finished = now_s();
    indexstore_store_dispose(store);

    double seconds = finished - started;
    printf("{\"api_version\": %u, \"scope\": \"%s\", \"threads\": %ld, \"units\": %zu, \"system_units\": %llu, "
           "\"unit_failures\": %llu, \"dependencies\": %llu, \"records\": %llu, \"record_failures\": %llu, "
           "\"symbols\": %llu, \"occurrences\": %llu, \"relations\": %llu, \"touched_bytes\": %llu, "
           "\"units_s\": %.6f, \"records_s\": %.6f, \"total_s\": %.6f, \"occurrences_per_s\": %.1f}\n",
           indexstore_version(), user_only ? "user" : "all", threads, units.count,
           (unsigned long long)system_units, (unsigned long long)unit_failures,
           (unsigned long long)records.dependencies, (unsigned long long)total.records_read,
           (unsigned long long)total.failures, (unsigned long long)total.symbols,
           (unsigned long long)total.occurrences, (unsigned long long)total.relations,
           (unsigned long long)total.touched_bytes, units_done - started, finished - units_done, seconds,
           seconds > 0 ? (double)total.occurrences / seconds : 0.0);
    return 0;
}
