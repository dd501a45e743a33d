/* Functions and frames made before the move: they keep the interpreter's
 * builtins, and must get the module's private builtins when its deprecated
 * names leave its namespace.  Each namespace is walked first
 * (namespace_walk.c); a pass over every object the collector tracks serves
 * those whose walk proved nothing; then frames running now, in any thread
 * (frame_builtins.c). */
#include "native.h"
#if PY_VERSION_HEX < 0x030B0000
#  include <frameobject.h>
#endif

/* What one pass rebinds: functions whose globals are namespaces[i] and
 * whose builtins are the interpreter's get privates[i] (3.10+: before, a
 * call looks globals['__builtins__'] up), and so do the frames of
 * generators, coroutines and async generators waiting with them. */
typedef struct {
    frame_targets targets;
    PyObject **found; /* functions with those globals, rebound or to rebind */
    Py_ssize_t *found_index;
    Py_ssize_t found_count;
    Py_ssize_t found_capacity;
    PyObject **generators;
    Py_ssize_t generator_count;
    Py_ssize_t generator_capacity;
    PyTypeObject *greenlet_type; /* greenlet.greenlet once imported, else NULL */
    PyObject **greenlets;
    Py_ssize_t greenlet_count;
    Py_ssize_t greenlet_capacity;
    int failed;
} rebind_pass;

/* 1 and the index if *item* is a function whose globals are a target's
 * (a walk may have rebound it already: its generators' frames still wait
 * with the interpreter's builtins), else 0. */
static int
wants_rebinding(rebind_pass *pass, PyObject *item, Py_ssize_t *index)
{
#if PY_VERSION_HEX >= 0x030A0000
    if (!PyFunction_Check(item)) {
        return 0;
    }
    PyFunctionObject *function = (PyFunctionObject *)item;
    for (Py_ssize_t i = 0; i < pass->targets.count; i++) {
        if (function->func_globals == pass->targets.namespaces[i]) {
            *index = i;
            return 1;
        }
    }
#else
    (void)pass;
    (void)item;
    (void)index;
#endif
    return 0;
}

/* Append *item* (and *index*, if *indexes*) to a growing array in raw
 * memory: the pass's callback may make no object.  0, or -1 when out of
 * memory. */
static int
append_raw(PyObject ***items, Py_ssize_t **indexes, Py_ssize_t *count, Py_ssize_t *capacity,
           PyObject *item, Py_ssize_t index)
{
    if (*count == *capacity) {
        Py_ssize_t larger = *capacity == 0 ? 64 : *capacity * 2;
        PyObject **grown = (PyObject **)PyMem_RawRealloc(*items, (size_t)larger * sizeof(PyObject *));
        if (grown == NULL) {
            return -1;
        }
        *items = grown;
        if (indexes != NULL) {
            Py_ssize_t *grown_indexes =
                (Py_ssize_t *)PyMem_RawRealloc(*indexes, (size_t)larger * sizeof(Py_ssize_t));
            if (grown_indexes == NULL) {
                return -1;
            }
            *indexes = grown_indexes;
        }
        *capacity = larger;
    }
    (*items)[*count] = item;
    if (indexes != NULL) {
        (*indexes)[*count] = index;
    }
    (*count)++;
    return 0;
}

/* Note *item* if the pass wants it; 0, or -1 when out of memory.  Each
 * object noted gets a reference: nothing that runs before the end of the
 * pass may free it. */
static int
note_object(rebind_pass *pass, PyObject *item)
{
    Py_ssize_t index;
    if (wants_rebinding(pass, item, &index)) {
        if (append_raw(&pass->found, &pass->found_index, &pass->found_count,
                       &pass->found_capacity, item, index) < 0) {
            return -1;
        }
    }
    else if (may_hold_waiting_frame(item)) {
        if (append_raw(&pass->generators, NULL, &pass->generator_count,
                       &pass->generator_capacity, item, 0) < 0) {
            return -1;
        }
    }
    else if (pass->greenlet_type != NULL && PyObject_TypeCheck(item, pass->greenlet_type)) {
        /* A greenlet parked in a function of a target (gevent, eventlet):
         * neither a generator nor a thread's running frame. */
        if (append_raw(&pass->greenlets, NULL, &pass->greenlet_count,
                       &pass->greenlet_capacity, item, 0) < 0) {
            return -1;
        }
    }
    else {
        return 0;
    }
    Py_INCREF(item);
    return 0;
}

#if PY_VERSION_HEX >= 0x030C0000
/* PyUnstable_GC_VisitObjects' callback: it may neither make nor free an
 * object, so it only notes what it wants (in raw memory). */
static int
visit_for_rebinding(PyObject *item, void *arg)
{
    rebind_pass *pass = (rebind_pass *)arg;
    if (note_object(pass, item) < 0) {
        pass->failed = 1;
        return 0;
    }
    return 1;
}
#endif

/* Note every function and generator the collector tracks that the pass
 * wants; 0, or -1 with an exception. */
static int
visit_tracked_objects(rebind_pass *pass)
{
#if PY_VERSION_HEX >= 0x030C0000
    /* Every object the collector tracks, without a list of them all. */
    PyUnstable_GC_VisitObjects(visit_for_rebinding, pass);
#else
    PyObject *gc = PyImport_ImportModule("gc");
    PyObject *objects = gc == NULL ? NULL : PyObject_CallMethod(gc, "get_objects", NULL);
    Py_XDECREF(gc);
    if (objects == NULL) {
        return -1;
    }
    Py_ssize_t size = PyList_GET_SIZE(objects);
    for (Py_ssize_t i = 0; i < size && !pass->failed; i++) {
        if (note_object(pass, PyList_GET_ITEM(objects, i)) < 0) {
            pass->failed = 1;
        }
    }
    Py_DECREF(objects);
#endif
    if (pass->failed) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

/* Give the frames of the generators noted the private builtins; from 3.11
 * on only where their code is that of a function of a target (such a frame
 * borrows its function's builtins).  0, or -1 with an exception. */
static int
rebind_generators(rebind_pass *pass)
{
    if (pass->generator_count == 0) {
        return 0;
    }
    PyObject *codes = NULL;
    PyObject *files = NULL;
#if PY_VERSION_HEX >= 0x030B0000
    if (pass->found_count == 0) {
        return 0;
    }
    codes = PySet_New(NULL);
    files = PySet_New(NULL);
    if (codes == NULL || files == NULL) {
        Py_XDECREF(codes);
        Py_XDECREF(files);
        return -1;
    }
    for (Py_ssize_t i = 0; i < pass->found_count; i++) {
        PyObject *code = ((PyFunctionObject *)pass->found[i])->func_code;
        if (PySet_Add(codes, code) < 0 ||
            (PyCode_Check(code) && PySet_Add(files, ((PyCodeObject *)code)->co_filename) < 0)) {
            Py_DECREF(codes);
            Py_DECREF(files);
            return -1;
        }
    }
    for (Py_ssize_t i = 0; i < pass->targets.count; i++) {
        /* Borrowed; a str key is looked up without running code. */
        PyObject *file = PyDict_GetItemString((PyObject *)pass->targets.namespaces[i], "__file__");
        if (file != NULL && PyUnicode_CheckExact(file) && PySet_Add(files, file) < 0) {
            Py_DECREF(codes);
            Py_DECREF(files);
            return -1;
        }
    }
#endif
    int result = 0;
    for (Py_ssize_t i = 0; i < pass->generator_count && result == 0; i++) {
        if (rebind_generator_frame(pass->generators[i], &pass->targets, codes, files) < 0) {
            result = -1;
        }
    }
    Py_XDECREF(codes);
    Py_XDECREF(files);
    return result;
}

/* Give the frames parked in the greenlets noted the private builtins.  0,
 * or -1 with an exception. */
static int
rebind_greenlets(rebind_pass *pass)
{
    for (Py_ssize_t i = 0; i < pass->greenlet_count; i++) {
        /* None for a greenlet not started, ended or running now (a
         * thread's frames, rebound with the running ones). */
        PyObject *frame = PyObject_GetAttrString(pass->greenlets[i], "gr_frame");
        if (frame == NULL) {
            return -1;
        }
        if (PyFrame_Check(frame)) {
            rebind_frame_chain((PyFrameObject *)frame, &pass->targets);
        }
        else {
            Py_DECREF(frame);
        }
    }
    return 0;
}

/* greenlet.greenlet if greenlet is imported (a new reference), else NULL. */
static PyTypeObject *
loaded_greenlet_type(void)
{
    PyObject *greenlet = PyDict_GetItemString(PyImport_GetModuleDict(), "greenlet");
    if (greenlet == NULL || !PyModule_Check(greenlet)) {
        return NULL;
    }
    PyObject *type = PyDict_GetItemString(PyModule_GetDict(greenlet), "greenlet");
    if (type == NULL || !PyType_Check(type)) {
        return NULL;
    }
    Py_INCREF(type);
    return (PyTypeObject *)type;
}

Py_ssize_t rebinding_passes = 0;

/* One pass over the tracked objects for namespaces[0..count): the number
 * of functions rebound, or -1 with an exception. */
static Py_ssize_t
rebind_in_one_pass(PyObject *const *namespaces, PyObject *const *privates, Py_ssize_t count,
                   PyObject *interpreter)
{
    rebind_pass pass = {{namespaces, privates, count, interpreter}, NULL, NULL, 0, 0, NULL, 0, 0,
                        loaded_greenlet_type(), NULL, 0, 0, 0};
    rebinding_passes++;
    Py_ssize_t rebound = 0;
    int failed = visit_tracked_objects(&pass) < 0;
#if PY_VERSION_HEX >= 0x030A0000
    for (Py_ssize_t i = 0; i < pass.found_count && !failed; i++) {
        rebound += give_private_builtins((PyFunctionObject *)pass.found[i], interpreter,
                                         privates[pass.found_index[i]]);
    }
#endif
    /* The frames after their functions, whose builtins they borrow. */
    if (!failed && (rebind_generators(&pass) < 0 || rebind_greenlets(&pass) < 0)) {
        failed = 1;
    }
    for (Py_ssize_t i = 0; i < pass.found_count; i++) {
        Py_DECREF(pass.found[i]);
    }
    for (Py_ssize_t i = 0; i < pass.generator_count; i++) {
        Py_DECREF(pass.generators[i]);
    }
    PyMem_RawFree(pass.found);
    PyMem_RawFree(pass.found_index);
    for (Py_ssize_t i = 0; i < pass.greenlet_count; i++) {
        Py_DECREF(pass.greenlets[i]);
    }
    PyMem_RawFree(pass.generators);
    PyMem_RawFree(pass.greenlets);
    Py_XDECREF(pass.greenlet_type);
    return failed ? -1 : rebound;
}

/* None if the walk proved its namespace, else why not. */
static PyObject *
walk_outcome_text(namespace_walk_result *result)
{
    switch (result->outcome) {
    case WALK_PROVED:
        Py_RETURN_NONE;
    case WALK_BUDGET_EXCEEDED:
        return PyUnicode_FromString("the walk exceeded its budget");
    case WALK_NAMESPACE_HELD:
        return PyUnicode_FromFormat(
            "the namespace has %zd references beyond its module and the functions found",
            result->extra);
    case WALK_GENERATOR_FUNCTION_HELD:
        return PyUnicode_FromFormat(
            "the generator function %U has %zd references beyond those the walk saw",
            result->held_function, result->extra);
    case WALK_GREENLETS_LOADED:
        return PyUnicode_FromString("greenlet is imported: a parked greenlet may run its functions");
    }
    Py_UNREACHABLE();
}

PyObject *
rebind_builtins(PyObject *modules, PyObject *privates, PyObject *interpreter, Py_ssize_t needed)
{
    Py_ssize_t count = PyList_GET_SIZE(modules);
    PyObject *outcomes = PyList_New(count);
    if (outcomes == NULL) {
        return NULL;
    }
    Py_ssize_t rebound = 0;
    int pass_ran = 0;
    /* Each namespace is walked first (namespace_walk.c); one pass serves
     * those whose walk proved nothing, if one of them is needed now (the
     * others wait for their own move).  From 3.10 on a function keeps the
     * builtins of the globals it was made in; before, each call looks
     * globals['__builtins__'] up, and the pass only looks for generators. */
    namespace_walk_result *results = (namespace_walk_result *)PyMem_RawCalloc(
        (size_t)(count + 1), sizeof(namespace_walk_result));
    /* [namespaces not proved | their privates | namespaces served | theirs] */
    PyObject **arrays = (PyObject **)PyMem_RawCalloc((size_t)(4 * count + 1), sizeof(PyObject *));
    PyObject **left = arrays;
    PyObject **served = arrays == NULL ? NULL : arrays + 2 * count;
    int failed = results == NULL || arrays == NULL;
    if (failed) {
        PyErr_NoMemory();
    }
    Py_ssize_t left_count = 0;
    Py_ssize_t served_count = 0;
    int pass_needed = 0;
#if PY_VERSION_HEX >= 0x030B0000
    /* From 3.11 a frame parked in a greenlet holds its function, not its
     * globals: no count tells it is there, only the pass finds it.  (Before,
     * it holds the globals, which the walk's count sees.) */
    int greenlets = 0;
    if (!failed) {
        PyTypeObject *greenlet_type = loaded_greenlet_type();
        greenlets = greenlet_type != NULL;
        Py_XDECREF(greenlet_type);
    }
#endif
    /* The walks make no object: the counts they read are those of one
     * moment, with nothing but the modules held on the way here. */
    for (Py_ssize_t i = 0; i < count && !failed; i++) {
        PyObject *module = PyList_GET_ITEM(modules, i);
        PyObject *namespace = PyModule_GetDict(module);
        PyObject *private_builtins = PyList_GET_ITEM(privates, i);
        /* The record set_deprecating() keeps holds the namespace too. */
        weak_entry *entry = weak_table_find(&deprecating_modules, module);
        Py_ssize_t known = entry != NULL && entry->value != NULL &&
                           PyTuple_GET_ITEM(entry->value, 2) == namespace;
        if (walk_namespace(namespace, private_builtins, interpreter, known, &results[i]) < 0) {
            failed = 1;
            break;
        }
#if PY_VERSION_HEX >= 0x030B0000
        if (greenlets && results[i].outcome == WALK_PROVED) {
            results[i].outcome = WALK_GREENLETS_LOADED;
        }
#endif
        if (results[i].outcome != WALK_PROVED) {
            pass_needed |= i < needed;
            left[left_count] = namespace;
            left[count + left_count] = private_builtins;
            left_count++;
        }
        else {
            served[served_count] = namespace;
            served[count + served_count] = private_builtins;
            served_count++;
        }
    }
    if (!failed && pass_needed) {
        pass_ran = 1;
        Py_ssize_t found = rebind_in_one_pass(left, left + count, left_count, interpreter);
        failed = found < 0;
        rebound += failed ? 0 : found;
        for (Py_ssize_t i = 0; i < left_count; i++) {
            served[served_count] = left[i];
            served[count + served_count] = left[count + i];
            served_count++;
        }
    }
#if PY_VERSION_HEX >= 0x030A0000
    /* The functions each walk found get the private builtins where it
     * proved its namespace, or where the pass ran over it too (the walk also
     * finds functions the pass cannot: untracked ones); elsewhere they wait
     * for a walk that proves it (namespace_walk.c says why). */
    for (Py_ssize_t i = 0; i < count && !failed; i++) {
        if (results[i].outcome == WALK_PROVED || pass_ran) {
            PyObject *private_builtins = PyList_GET_ITEM(privates, i);
            for (Py_ssize_t j = 0; j < results[i].to_rebind_count; j++) {
                rebound += give_private_builtins((PyFunctionObject *)results[i].to_rebind[j],
                                                 interpreter, private_builtins);
            }
        }
    }
#endif
    if (!failed) {
        /* Frames running now, in any thread, after the functions whose
         * builtins they borrow (3.11+). */
        frame_targets targets = {served, served + count, served_count, interpreter};
        failed = rebind_running_frames(&targets) < 0;
    }
    for (Py_ssize_t i = 0; i < count && results != NULL; i++) {
        if (!failed) {
            PyObject *text = walk_outcome_text(&results[i]);
            PyObject *outcome = text == NULL ? NULL : Py_BuildValue("(nN)", results[i].walked, text);
            failed = outcome == NULL;
            if (!failed) {
                PyList_SET_ITEM(outcomes, i, outcome);
            }
        }
        Py_XDECREF(results[i].held_function);
        for (Py_ssize_t j = 0; j < results[i].to_rebind_count; j++) {
            Py_DECREF(results[i].to_rebind[j]);
        }
        PyMem_RawFree(results[i].to_rebind);
    }
    PyMem_RawFree(results);
    PyMem_RawFree(arrays);
    if (failed) {
        Py_DECREF(outcomes);
        return NULL;
    }
    return Py_BuildValue("(nON)", rebound, pass_ran ? Py_True : Py_False, outcomes);
}
