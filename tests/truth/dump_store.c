/*
 * dump_store: an independent reader of a Swift/Clang index store, for tests.
 *
 * It shares no code with xcindex: it is written against the toolchain's own header
 * (indexstore.h) and libIndexStore's C API, and prints what the store holds, unjudged:
 * every unit, and every record any non-system unit depends on (each record once: records
 * are content-addressed, so a record shared by several units, such as a header included by
 * several C files, is the same bytes whoever reaches it; the units' dependency lines say who).
 *
 * Usage: dump_store STORE_PATH     (the folder that holds v5/)
 *
 * Output: one line per fact, fields separated by TAB; in a string field, backslash, TAB,
 * newline and carriage return are written \\ \t \n \r. Every unit block comes before every
 * record block.
 *   V  <libIndexStore API version> <store format version>
 *   U  unit-name main-file module is-system output-file provider target mtime-s mtime-ns
 *   D  kind(U|R|F) name filepath module is-system      (dependencies of the unit above)
 *   R  record-name                                      (a record block starts)
 *   S  usr name kind subkind properties language        (every symbol of the record)
 *   O  usr roles line column                            (every occurrence, implicit included)
 *   L  roles usr                                        (every relation of the occurrence above)
 *   E  unit|record name message                         (could not be read; the rest goes on)
 * Numbers are decimal. Exit status: 0, or 2 when the store itself cannot be opened.
 */
#include <indexstore/indexstore.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void put_string(indexstore_string_ref_t s) {
    const char *p = s.data, *end = s.data + s.length, *run = p;
    for (; p < end; p++) {
        const char *escape = NULL;
        switch (*p) {
            case '\\': escape = "\\\\"; break;
            case '\t': escape = "\\t"; break;
            case '\n': escape = "\\n"; break;
            case '\r': escape = "\\r"; break;
            default: continue;
        }
        fwrite(run, 1, (size_t)(p - run), stdout);
        fputs(escape, stdout);
        run = p + 1;
    }
    fwrite(run, 1, (size_t)(end - run), stdout);
}

static void put_cstring(const char *s) {
    indexstore_string_ref_t ref = {s, strlen(s)};
    put_string(ref);
}

static void put_error(const char *what, const char *name, indexstore_error_t error) {
    printf("E\t%s\t", what);
    put_cstring(name);
    putchar('\t');
    put_cstring(error ? indexstore_error_get_description(error) : "unknown error");
    putchar('\n');
    if (error) indexstore_error_dispose(error);
}

/* --- the set of record names to read (insertion-ordered, deduplicated) --------------- */

static char **records;
static size_t record_count, record_capacity;
static char **table;
static size_t table_size = 1024;

static uint64_t hash(const char *s, size_t n) {
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
    return h;
}

static void table_put(char *name) {
    size_t i = hash(name, strlen(name)) & (table_size - 1);
    while (table[i]) i = (i + 1) & (table_size - 1);
    table[i] = name;
}

static void add_record(indexstore_string_ref_t name) {
    size_t i = hash(name.data, name.length) & (table_size - 1);
    for (; table[i]; i = (i + 1) & (table_size - 1)) {
        if (strlen(table[i]) == name.length && !memcmp(table[i], name.data, name.length)) return;
    }
    char *copy = malloc(name.length + 1);
    memcpy(copy, name.data, name.length);
    copy[name.length] = '\0';
    if (record_count == record_capacity) {
        record_capacity = record_capacity ? 2 * record_capacity : 1024;
        records = realloc(records, record_capacity * sizeof *records);
    }
    records[record_count++] = copy;
    if (2 * record_count > table_size) { /* grow and rehash: keep the load under a half */
        free(table);
        table_size *= 2;
        table = calloc(table_size, sizeof *table);
        for (size_t r = 0; r < record_count; r++) table_put(records[r]);
    } else {
        table[i] = copy;
    }
}

/* --- units ---------------------------------------------------------------------------- */

struct unit_context {
    indexstore_t store;
    int is_system;
};

static bool dependency(void *context, indexstore_unit_dependency_t dep) {
    struct unit_context *unit = context;
    indexstore_unit_dependency_kind_t kind = indexstore_unit_dependency_get_kind(dep);
    const char *letter = kind == INDEXSTORE_UNIT_DEPENDENCY_UNIT     ? "U"
                         : kind == INDEXSTORE_UNIT_DEPENDENCY_RECORD ? "R"
                         : kind == INDEXSTORE_UNIT_DEPENDENCY_FILE   ? "F"
                                                                     : "?";
    indexstore_string_ref_t name = indexstore_unit_dependency_get_name(dep);
    printf("D\t%s\t", letter);
    put_string(name);
    putchar('\t');
    put_string(indexstore_unit_dependency_get_filepath(dep));
    putchar('\t');
    put_string(indexstore_unit_dependency_get_modulename(dep));
    printf("\t%d\n", indexstore_unit_dependency_is_system(dep) ? 1 : 0);
    if (kind == INDEXSTORE_UNIT_DEPENDENCY_RECORD && !unit->is_system && name.length) add_record(name);
    return true;
}

static bool unit(void *context, indexstore_string_ref_t unit_name) {
    indexstore_t store = context;
    char *name = strndup(unit_name.data, unit_name.length);
    indexstore_error_t error = NULL;
    indexstore_unit_reader_t reader = indexstore_unit_reader_create(store, name, &error);
    if (!reader) {
        put_error("unit", name, error);
        free(name);
        return true;
    }
    int64_t seconds = 0, nanoseconds = 0;
    indexstore_unit_reader_get_modification_time(reader, &seconds, &nanoseconds);
    struct unit_context unit = {store, indexstore_unit_reader_is_system_unit(reader) ? 1 : 0};
    fputs("U\t", stdout);
    put_cstring(name);
    putchar('\t');
    put_string(indexstore_unit_reader_get_main_file(reader));
    putchar('\t');
    put_string(indexstore_unit_reader_get_module_name(reader));
    printf("\t%d\t", unit.is_system);
    put_string(indexstore_unit_reader_get_output_file(reader));
    putchar('\t');
    put_string(indexstore_unit_reader_get_provider_identifier(reader));
    putchar('\t');
    put_string(indexstore_unit_reader_get_target(reader));
    printf("\t%lld\t%lld\n", (long long)seconds, (long long)nanoseconds);
    indexstore_unit_reader_dependencies_apply_f(reader, &unit, dependency);
    indexstore_unit_reader_dispose(reader);
    free(name);
    return true;
}

/* --- records -------------------------------------------------------------------------- */

static bool symbol(void *context, indexstore_symbol_t sym) {
    (void)context;
    fputs("S\t", stdout);
    put_string(indexstore_symbol_get_usr(sym));
    putchar('\t');
    put_string(indexstore_symbol_get_name(sym));
    printf("\t%d\t%d\t%llu\t%d\n", (int)indexstore_symbol_get_kind(sym), (int)indexstore_symbol_get_subkind(sym),
           (unsigned long long)indexstore_symbol_get_properties(sym), (int)indexstore_symbol_get_language(sym));
    return true;
}

static bool relation(void *context, indexstore_symbol_relation_t rel) {
    (void)context;
    printf("L\t%llu\t", (unsigned long long)indexstore_symbol_relation_get_roles(rel));
    put_string(indexstore_symbol_get_usr(indexstore_symbol_relation_get_symbol(rel)));
    putchar('\n');
    return true;
}

static bool occurrence(void *context, indexstore_occurrence_t occ) {
    unsigned line = 0, column = 0;
    indexstore_occurrence_get_line_col(occ, &line, &column);
    fputs("O\t", stdout);
    put_string(indexstore_symbol_get_usr(indexstore_occurrence_get_symbol(occ)));
    printf("\t%llu\t%u\t%u\n", (unsigned long long)indexstore_occurrence_get_roles(occ), line, column);
    indexstore_occurrence_relations_apply_f(occ, context, relation);
    return true;
}

static void record(indexstore_t store, const char *name) {
    indexstore_error_t error = NULL;
    indexstore_record_reader_t reader = indexstore_record_reader_create(store, name, &error);
    if (!reader) {
        put_error("record", name, error);
        return;
    }
    fputs("R\t", stdout);
    put_cstring(name);
    putchar('\n');
    indexstore_record_reader_symbols_apply_f(reader, true, NULL, symbol);
    indexstore_record_reader_occurrences_apply_f(reader, NULL, occurrence);
    indexstore_record_reader_dispose(reader);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s STORE_PATH\n", argv[0]);
        return 2;
    }
    static char buffer[1 << 20];
    setvbuf(stdout, buffer, _IOFBF, sizeof buffer);
    indexstore_error_t error = NULL;
    indexstore_t store = indexstore_store_create(argv[1], &error);
    if (!store) {
        fprintf(stderr, "cannot open the index store %s: %s\n", argv[1],
                error ? indexstore_error_get_description(error) : "unknown error");
        return 2;
    }
    table = calloc(table_size, sizeof *table);
    printf("V\t%u\t%u\n", indexstore_version(), indexstore_format_version());
    indexstore_store_units_apply_f(store, 1, store, unit);
    for (size_t r = 0; r < record_count; r++) record(store, records[r]);
    indexstore_store_dispose(store);
    return fflush(stdout) == 0 ? 0 : 1;
}
