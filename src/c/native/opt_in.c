/* Whose hooks are called.
 *
 * A library's enable() gives PEP 726 hooks to its own module only: while
 * process-wide dispatch is off, the patched slot calls the hooks of opted-in
 * modules and does the plain store for every other module, hook or not.  The
 * check runs only once a hook has been found in the namespace, so a store on
 * a module without hooks (nearly all of them) pays nothing for it.
 *
 * The opted-in modules are held weakly: an open-addressing table of module
 * addresses (linear probing, backward-shift deletion), each with a weak
 * reference whose callback removes the entry while the module is being
 * deallocated, before its memory can be reused by a new module.  The table
 * owns the weak references (a reachable weak reference always gets its
 * callback, in the cyclic garbage collector too). */
#include "native.h"

int process_wide = 0;

typedef struct {
    PyObject *module; /* borrowed: the weak reference's callback removes it */
    PyObject *ref;    /* owned weak reference to module */
} opt_in_entry;

static opt_in_entry *opt_in_table = NULL;
static size_t opt_in_capacity = 0; /* 0 or a power of two */
size_t opt_in_count = 0;
/* The weak references' callback (forget_opted_in below). */
static PyObject *opt_in_callback = NULL;

static inline size_t
opt_in_home(PyObject *module)
{
    uintptr_t address = (uintptr_t)module;
    return (size_t)((address >> 4) ^ (address >> 13)) & (opt_in_capacity - 1);
}

int
is_opted_in(PyObject *module)
{
    if (opt_in_count == 0) {
        return 0;
    }
    size_t mask = opt_in_capacity - 1;
    for (size_t i = opt_in_home(module); opt_in_table[i].module != NULL; i = (i + 1) & mask) {
        if (opt_in_table[i].module == module) {
            return 1;
        }
    }
    return 0;
}

/* Insert without growing; the caller made room. */
static void
opt_in_put(PyObject *module, PyObject *ref)
{
    size_t mask = opt_in_capacity - 1;
    size_t i = opt_in_home(module);
    while (opt_in_table[i].module != NULL) {
        i = (i + 1) & mask;
    }
    opt_in_table[i].module = module;
    opt_in_table[i].ref = ref;
    opt_in_count++;
}

static int
opt_in_grow(void)
{
    size_t capacity = opt_in_capacity == 0 ? 16 : opt_in_capacity * 2;
    opt_in_entry *table = (opt_in_entry *)PyMem_RawCalloc(capacity, sizeof(opt_in_entry));
    if (table == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    opt_in_entry *old = opt_in_table;
    size_t old_capacity = opt_in_capacity;
    opt_in_table = table;
    opt_in_capacity = capacity;
    opt_in_count = 0;
    for (size_t i = 0; i < old_capacity; i++) {
        if (old[i].module != NULL) {
            opt_in_put(old[i].module, old[i].ref);
        }
    }
    PyMem_RawFree(old);
    return 0;
}

/* Remove the entry at *i*, moving later entries of its probe run back so
 * that every entry stays reachable from its home slot.  Returns the entry's
 * weak reference (owned) for the caller to release. */
static PyObject *
opt_in_remove_at(size_t i)
{
    size_t mask = opt_in_capacity - 1;
    PyObject *ref = opt_in_table[i].ref;
    opt_in_table[i].module = NULL;
    opt_in_table[i].ref = NULL;
    opt_in_count--;
    size_t j = i;
    for (;;) {
        j = (j + 1) & mask;
        if (opt_in_table[j].module == NULL) {
            break;
        }
        size_t home = opt_in_home(opt_in_table[j].module);
        /* The entry at j stays if its home lies cyclically in (i, j]. */
        int stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
        if (!stays) {
            opt_in_table[i] = opt_in_table[j];
            opt_in_table[j].module = NULL;
            opt_in_table[j].ref = NULL;
            i = j;
        }
    }
    return ref;
}

/* The weak references' callback: the module is being deallocated. */
static PyObject *
forget_opted_in(PyObject *self, PyObject *ref)
{
    (void)self;
    for (size_t i = 0; i < opt_in_capacity; i++) {
        if (opt_in_table[i].ref == ref) {
            Py_DECREF(opt_in_remove_at(i));
            break;
        }
    }
    Py_RETURN_NONE;
}

static PyMethodDef forget_opted_in_def = {"_forget_opted_in", forget_opted_in, METH_O, NULL};

int
opt_in_module(PyObject *module)
{
    if (is_opted_in(module)) {
        return 0;
    }
    if (opt_in_callback == NULL) {
        opt_in_callback = PyCFunction_New(&forget_opted_in_def, NULL);
        if (opt_in_callback == NULL) {
            return -1;
        }
    }
    if ((opt_in_count + 1) * 2 > opt_in_capacity && opt_in_grow() < 0) {
        return -1;
    }
    PyObject *ref = PyWeakref_NewRef(module, opt_in_callback);
    if (ref == NULL) {
        return -1;
    }
    opt_in_put(module, ref);
    return 0;
}

/* Forget every opt-in.  *release* is 0 when the runtime that made the weak
 * references is gone: then only the pointers are dropped. */
void
forget_all_opt_ins(int release)
{
    opt_in_entry *table = opt_in_table;
    size_t capacity = opt_in_capacity;
    opt_in_table = NULL;
    opt_in_capacity = 0;
    opt_in_count = 0;
    if (!release) {
        /* The callback belonged to the finished runtime too. */
        opt_in_callback = NULL;
    }
    if (table == NULL) {
        return;
    }
    for (size_t i = 0; release && i < capacity; i++) {
        Py_XDECREF(table[i].ref);
    }
    PyMem_RawFree(table);
}
