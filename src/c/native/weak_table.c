/* Tables of modules held weakly, keyed by address: the opted-in modules
 * (opt_in.c).
 *
 * An open-addressing table of module addresses (linear probing,
 * backward-shift deletion), each with a weak reference whose callback removes
 * the entry while the module is being deallocated, before its memory can be
 * reused by a new module, and an optional value the table owns.  The table
 * owns the weak references (a reachable weak reference always gets its
 * callback, in the cyclic garbage collector too). */
#include "native.h"

/* Insert without growing; the caller made room. */
static void
weak_table_put(weak_table *table, PyObject *module, PyObject *ref, PyObject *value)
{
    size_t mask = table->capacity - 1;
    size_t i = weak_table_home(table, module);
    while (table->entries[i].module != NULL) {
        i = (i + 1) & mask;
    }
    table->entries[i].module = module;
    table->entries[i].ref = ref;
    table->entries[i].value = value;
    table->entries[i].flags = 0;
    table->count++;
}

static int
weak_table_grow(weak_table *table)
{
    size_t capacity = table->capacity == 0 ? 16 : table->capacity * 2;
    weak_entry *entries = (weak_entry *)PyMem_RawCalloc(capacity, sizeof(weak_entry));
    if (entries == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    weak_entry *old = table->entries;
    size_t old_capacity = table->capacity;
    table->entries = entries;
    table->capacity = capacity;
    table->count = 0;
    for (size_t i = 0; i < old_capacity; i++) {
        if (old[i].module != NULL) {
            weak_table_put(table, old[i].module, old[i].ref, old[i].value);
            weak_table_find(table, old[i].module)->flags = old[i].flags;
        }
    }
    PyMem_RawFree(old);
    return 0;
}

/* Remove the entry at *i*, moving later entries of its probe run back so
 * that every entry stays reachable from its home slot.  The entry's weak
 * reference and value (owned) go to *ref* and *value* for the caller to
 * release once the table is consistent again. */
static void
weak_table_remove_at(weak_table *table, size_t i, PyObject **ref, PyObject **value)
{
    size_t mask = table->capacity - 1;
    *ref = table->entries[i].ref;
    *value = table->entries[i].value;
    table->entries[i].module = NULL;
    table->entries[i].ref = NULL;
    table->entries[i].value = NULL;
    table->entries[i].flags = 0;
    table->count--;
    size_t j = i;
    for (;;) {
        j = (j + 1) & mask;
        if (table->entries[j].module == NULL) {
            break;
        }
        size_t home = weak_table_home(table, table->entries[j].module);
        /* The entry at j stays if its home lies cyclically in (i, j]. */
        int stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
        if (!stays) {
            table->entries[i] = table->entries[j];
            table->entries[j].module = NULL;
            table->entries[j].ref = NULL;
            table->entries[j].value = NULL;
            table->entries[j].flags = 0;
            i = j;
        }
    }
}

int
weak_table_set(weak_table *table, PyObject *module, PyObject *value)
{
    weak_entry *entry = weak_table_find(table, module);
    if (entry != NULL) {
        PyObject *old = entry->value;
        Py_XINCREF(value);
        entry->value = value;
        /* Last: releasing the old value may run code. */
        Py_XDECREF(old);
        return 0;
    }
    if (table->callback == NULL) {
        table->callback = PyCFunction_New(table->callback_def, NULL);
        if (table->callback == NULL) {
            return -1;
        }
    }
    if ((table->count + 1) * 2 > table->capacity && weak_table_grow(table) < 0) {
        return -1;
    }
    PyObject *ref = PyWeakref_NewRef(module, table->callback);
    if (ref == NULL) {
        return -1;
    }
    Py_XINCREF(value);
    weak_table_put(table, module, ref, value);
    return 0;
}

int
weak_table_forget_ref(weak_table *table, PyObject *ref)
{
    for (size_t i = 0; i < table->capacity; i++) {
        if (table->entries[i].ref == ref) {
            PyObject *owned_ref, *value;
            weak_table_remove_at(table, i, &owned_ref, &value);
            Py_DECREF(owned_ref);
            Py_XDECREF(value);
            return value != NULL;
        }
    }
    return 0;
}

void
weak_table_clear(weak_table *table, int release)
{
    weak_entry *entries = table->entries;
    size_t capacity = table->capacity;
    table->entries = NULL;
    table->capacity = 0;
    table->count = 0;
    if (!release) {
        /* The callback belonged to the finished runtime too. */
        table->callback = NULL;
    }
    if (entries == NULL) {
        return;
    }
    for (size_t i = 0; release && i < capacity; i++) {
        Py_XDECREF(entries[i].ref);
        Py_XDECREF(entries[i].value);
    }
    PyMem_RawFree(entries);
}
