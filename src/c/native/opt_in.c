/* Whose hooks are called.
 *
 * A library's enable() gives PEP 726 hooks to its own module only: while
 * process-wide dispatch is off, the patched slot calls the hooks of opted-in
 * modules and does the plain store for every other module, hook or not.  The
 * check runs only once a hook has been found in the namespace, so a store on
 * a module without hooks (nearly all of them) pays nothing for it.
 *
 * The opted-in modules are held weakly, in a table of weak_table.c. */
#include "native.h"

int process_wide = 0;

/* The weak references' callback: the module is being deallocated. */
static PyObject *
forget_opted_in(PyObject *self, PyObject *ref)
{
    (void)self;
    if (weak_table_forget_ref(&opt_ins, ref)) {
        /* It had a relocated __getattr__ (or was watched for one). */
        relocating_count--;
        release_getattro_wrapper();
    }
    Py_RETURN_NONE;
}

static PyMethodDef forget_opted_in_def = {"_forget_opted_in", forget_opted_in, METH_O, NULL};

weak_table opt_ins = {NULL, 0, 0, NULL, &forget_opted_in_def};

int
is_opted_in(PyObject *module)
{
    return weak_table_find(&opt_ins, module) != NULL;
}

int
opt_in_module(PyObject *module, int relocate_getattr, int chosen)
{
    if (!is_opted_in(module) && weak_table_set(&opt_ins, module, NULL) < 0) {
        return -1;
    }
    return place_module_getattr(module, relocate_getattr, chosen);
}

int
opt_in_alone(PyObject *extension, PyObject *module, PyObject *state_module)
{
    /* No Python code runs from the test to the opt-in: no other thread loads
     * the installation state in between, so the state, whenever it loads,
     * adopts every module opted in here (opted_in_modules()) and none is
     * opted in behind its back afterwards. */
    if (!is_main_interpreter()) {
        return 0;
    }
    PyObject *loaded = PyDict_GetItemWithError(PyImport_GetModuleDict(), state_module);
    if (loaded != NULL) {
        return 0;
    }
    if (PyErr_Occurred() || patch_module_type(extension, Py_None) < 0) {
        return -1;
    }
    PyTypeObject *cls = Py_TYPE(module);
    if (cls->tp_setattro == original_setattro) {
        cls->tp_setattro = installed_setattro;
    }
    /* enable()'s default: the function is held outside the namespace on 3.11
     * only, where that taxes no other module (_native_engine.py says why). */
    int relocate_getattr = PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000;
    return opt_in_module(module, relocate_getattr, 0) < 0 ? -1 : 1;
}

/* Forget every opt-in.  *release* is 0 when the runtime that made the weak
 * references is gone: then only the pointers are dropped. */
void
forget_all_opt_ins(int release)
{
    if (release) {
        /* The modules keep their PEP 562 __getattr__. */
        return_all_relocated();
    }
    weak_table_clear(&opt_ins, release);
    relocating_count = 0;
    stop_getattr_watcher(release);
    if (!release) {
        /* It belonged to the finished runtime. */
        relocation_marker = NULL;
    }
}
