/* Frames that started before a deprecating module's names moved.
 *
 * A frame copies its builtins when it starts: from the function on 3.10+,
 * from globals['__builtins__'] (or from the calling frame, when that has the
 * same globals) on 3.8 and 3.9.  A generator or coroutine suspended before
 * the move, a function running then in any thread, or one waiting below the
 * read that moves the names, would otherwise keep the interpreter's builtins,
 * where the moved names are not, and raise NameError on its next read of one
 * of them.  At the move each such frame gets the module's private builtins,
 * but a module body's.
 *
 * Before 3.11 PyFrameObject's fields are public and the frame holds its
 * builtins strongly.  From 3.11 on the data lives in the interpreter's frame
 * (Include/internal/pycore_frame.h, pycore_interpframe_structs.h from 3.14),
 * which borrows its builtins from its function; the public API can read them
 * (PyFrame_GetGlobals, PyFrame_GetBuiltins) but not write them.  Its first
 * fields have kept one order from 3.11 to 3.15: the function, the globals,
 * then the builtins.  A frame is written only when the view below reads the
 * globals and builtins that the public API reports, and its function already
 * has the private builtins, which then outlive the frame's borrowed pointer. */
#include "native.h"
#if PY_VERSION_HEX < 0x030B0000
#  include <frameobject.h>
#endif

#if PY_VERSION_HEX >= 0x030B0000
/* The start of PyFrameObject (struct _frame) on 3.11-3.15. */
typedef struct {
    PyObject_HEAD
    PyFrameObject *back;
    void *data; /* the interpreter's frame */
} frame_object_start;

/* The start of the interpreter's frame. */
typedef struct {
#  if PY_VERSION_HEX >= 0x030C0000
    void *code;        /* f_code (3.12), f_executable (3.13+) */
    void *previous;
    uintptr_t function; /* f_funcobj: a tagged _PyStackRef from 3.14 on */
#  else
    uintptr_t function; /* f_func */
#  endif
    PyObject *globals;  /* borrowed */
    PyObject *builtins; /* borrowed */
} interpreter_frame_start;

/* The low bits of a _PyStackRef tag it; an object is at least 8-aligned. */
#  define STACK_REF_TAG_BITS ((uintptr_t)7)
#endif

/* The index of the target whose namespace is *globals*, or -1. */
static Py_ssize_t
target_of(const frame_targets *targets, PyObject *globals)
{
    for (Py_ssize_t i = 0; i < targets->count; i++) {
        if (targets->namespaces[i] == globals) {
            return i;
        }
    }
    return -1;
}

/* Give *frame* its module's private builtins if it runs with the
 * interpreter's and the globals of a target; 1 if given, else 0. */
static int
rebind_frame(PyFrameObject *frame, const frame_targets *targets)
{
#if PY_VERSION_HEX >= 0x030B0000
    PyObject *globals = PyFrame_GetGlobals(frame);
    PyObject *builtins = PyFrame_GetBuiltins(frame);
    /* Both stay alive without these references: the frame's function holds
     * them. */
    Py_DECREF(globals);
    Py_DECREF(builtins);
    if (builtins != targets->interpreter) {
        return 0;
    }
    Py_ssize_t index = target_of(targets, globals);
    if (index < 0) {
        return 0;
    }
    PyObject *private_builtins = targets->privates[index];
    interpreter_frame_start *data =
        (interpreter_frame_start *)((frame_object_start *)frame)->data;
    if (data == NULL || data->globals != globals || data->builtins != builtins) {
        return 0; /* a layout this file does not know */
    }
    PyObject *function = (PyObject *)(data->function & ~STACK_REF_TAG_BITS);
    if (function == NULL || !PyFunction_Check(function) ||
        ((PyFunctionObject *)function)->func_globals != globals ||
        ((PyFunctionObject *)function)->func_builtins != private_builtins) {
        /* The frame borrows its builtins: only builtins its function holds. */
        return 0;
    }
    data->builtins = private_builtins;
    return 1;
#else
    if (frame->f_builtins != targets->interpreter) {
        return 0;
    }
    Py_ssize_t index = target_of(targets, frame->f_globals);
    if (index < 0) {
        return 0;
    }
    Py_INCREF(targets->privates[index]);
    Py_SETREF(frame->f_builtins, targets->privates[index]);
    return 1;
#endif
}

int
may_hold_waiting_frame(PyObject *item)
{
    return PyGen_CheckExact(item) || PyCoro_CheckExact(item) || PyAsyncGen_CheckExact(item);
}

int
rebind_generator_frame(PyObject *generator, const frame_targets *targets, PyObject *codes,
                       PyObject *files)
{
#if PY_VERSION_HEX >= 0x030B0000
    /* Asking for the frame makes a frame object: only for the code of a
     * function that was rebound, or code from the file of one (a function
     * whose __code__ was replaced after the generator started: a hot
     * reload, a patch). */
    int is_generator = PyGen_CheckExact(generator);
    int is_coroutine = PyCoro_CheckExact(generator);
    PyObject *code = PyObject_GetAttrString(
        generator, is_generator ? "gi_code" : is_coroutine ? "cr_code" : "ag_code");
    if (code == NULL) {
        return -1;
    }
    int wanted = PySet_Contains(codes, code);
    if (wanted == 0 && PyCode_Check(code)) {
        wanted = PySet_Contains(files, ((PyCodeObject *)code)->co_filename);
    }
    Py_DECREF(code);
    if (wanted <= 0) {
        return wanted;
    }
    PyObject *frame = PyObject_GetAttrString(
        generator, is_generator ? "gi_frame" : is_coroutine ? "cr_frame" : "ag_frame");
    if (frame == NULL) {
        return -1;
    }
    int rebound = PyFrame_Check(frame) ? rebind_frame((PyFrameObject *)frame, targets) : 0;
    Py_DECREF(frame);
    return rebound;
#else
    (void)codes;
    (void)files;
    /* Every kind starts with the generator's fields (_PyGenObject_HEAD). */
    PyFrameObject *frame = ((PyGenObject *)generator)->gi_frame;
    return frame == NULL ? 0 : rebind_frame(frame, targets);
#endif
}

int
frame_code_is_named(struct _frame *frame, const char *name)
{
#if PY_VERSION_HEX >= 0x03090000
    PyCodeObject *code = PyFrame_GetCode(frame);
#else
    PyCodeObject *code = frame->f_code;
    Py_INCREF(code);
#endif
    int named = PyUnicode_CompareWithASCIIString(code->co_name, name) == 0;
    Py_DECREF(code);
    return named;
}

/* The frame *tstate* runs now (a new reference), or NULL. */
static PyFrameObject *
top_frame_of(PyThreadState *tstate)
{
#if PY_VERSION_HEX >= 0x03090000
    return PyThreadState_GetFrame(tstate);
#else
    Py_XINCREF(tstate->frame);
    return tstate->frame;
#endif
}

/* The frame that called *frame* (a new reference), or NULL. */
static PyFrameObject *
caller_of(PyFrameObject *frame)
{
#if PY_VERSION_HEX >= 0x03090000
    return PyFrame_GetBack(frame);
#else
    Py_XINCREF(frame->f_back);
    return frame->f_back;
#endif
}

Py_ssize_t
rebind_frame_chain(PyFrameObject *frame, const frame_targets *targets)
{
    Py_ssize_t rebound = 0;
    while (frame != NULL) {
        /* A module body keeps the builtins it started with until it ends,
         * with the names still in its namespace: that is how pep726hook
         * tells that the module's import has not ended. */
        if (!frame_code_is_named(frame, "<module>")) {
            rebound += rebind_frame(frame, targets);
        }
        PyFrameObject *back = caller_of(frame);
        Py_DECREF(frame);
        frame = back;
    }
    return rebound;
}

/* The threads of this interpreter only.  sys._current_frames() also walks
 * those of every other interpreter, whose frames a sub-interpreter with its
 * own GIL runs meanwhile (making their frame objects here would race with
 * it).  This interpreter's threads wait for its GIL, which the caller
 * holds: their frames stay as they are.  A thread state is unlinked from
 * the list by its own thread while it holds the GIL (and one made by
 * PyThreadState_New() is whole before it is linked at the head). */
static PyThreadState *
first_thread(void)
{
#if PY_VERSION_HEX >= 0x03090000
    return PyInterpreterState_ThreadHead(PyInterpreterState_Get());
#else
    return PyInterpreterState_ThreadHead(PyThreadState_Get()->interp);
#endif
}

Py_ssize_t
rebind_running_frames(const frame_targets *targets)
{
    if (targets->count == 0) {
        return 0;
    }
    Py_ssize_t rebound = 0;
    for (PyThreadState *tstate = first_thread(); tstate != NULL;
         tstate = PyThreadState_Next(tstate)) {
        rebound += rebind_frame_chain(top_frame_of(tstate), targets);
    }
    return rebound;
}

/* 1 if *frame* (a reference the call takes) or a frame below it is a body
 * of the module whose namespace is *namespace*, with other builtins than
 * *private_builtins* unless that is NULL, else 0.  A body started after the
 * private builtins existed (a reload) reads the moved names there. */
static int
chain_runs_body(PyFrameObject *frame, PyObject *namespace, PyObject *private_builtins)
{
    while (frame != NULL) {
#if PY_VERSION_HEX >= 0x030B0000
        PyObject *globals = PyFrame_GetGlobals(frame);
        PyObject *builtins = PyFrame_GetBuiltins(frame);
        Py_DECREF(globals);
        Py_DECREF(builtins);
#else
        PyObject *globals = frame->f_globals;
        PyObject *builtins = frame->f_builtins;
#endif
        if (globals == namespace &&
            (private_builtins == NULL || builtins != private_builtins) &&
            frame_code_is_named(frame, "<module>")) {
            Py_DECREF(frame);
            return 1;
        }
        PyFrameObject *back = caller_of(frame);
        Py_DECREF(frame);
        frame = back;
    }
    return 0;
}

int
body_runs_in_another_thread(PyObject *namespace, PyObject *private_builtins)
{
    PyThreadState *current = PyThreadState_Get();
    for (PyThreadState *tstate = first_thread(); tstate != NULL;
         tstate = PyThreadState_Next(tstate)) {
        if (tstate != current &&
            chain_runs_body(top_frame_of(tstate), namespace, private_builtins)) {
            return 1;
        }
    }
    return 0;
}

int
body_runs_here(PyObject *namespace)
{
    return chain_runs_body(top_frame_of(PyThreadState_Get()), namespace, NULL);
}

#if !HOOKLESS_CACHE
/* Whether *frame* runs importlib's _exec(spec, module) for *module*, which
 * importlib.reload() calls to run the body again (as the deprecations
 * package's _moved._reloads() asks in Python). */
static int
frame_reloads(PyFrameObject *frame, PyObject *module)
{
    if (!frame_code_is_named(frame, "_exec")) {
        return 0;
    }
#if PY_VERSION_HEX >= 0x030B0000
    PyObject *globals = PyFrame_GetGlobals(frame);
    Py_DECREF(globals); /* the frame holds it */
#else
    PyObject *globals = frame->f_globals;
#endif
    PyObject *name = PyDict_GetItemString(globals, "__name__");
    if (name == NULL || !PyUnicode_Check(name) ||
        (PyUnicode_CompareWithASCIIString(name, "_frozen_importlib") != 0 &&
         PyUnicode_CompareWithASCIIString(name, "importlib._bootstrap") != 0)) {
        return 0;
    }
    /* Its argument `module`, read as frame.f_locals reads it. */
#if PY_VERSION_HEX >= 0x030B0000
    PyObject *locals = PyFrame_GetLocals(frame);
#else
    PyObject *locals = PyFrame_FastToLocalsWithError(frame) < 0 ? NULL : frame->f_locals;
    Py_XINCREF(locals);
#endif
    if (locals == NULL) {
        PyErr_Clear();
        return 0;
    }
    PyObject *running = PyDict_Check(locals) ? PyDict_GetItemString(locals, "module") : NULL;
    Py_DECREF(locals);
    return running == module;
}

int
reload_runs_here(PyObject *module)
{
    PyFrameObject *frame = top_frame_of(PyThreadState_Get());
    while (frame != NULL) {
        if (frame_reloads(frame, module)) {
            Py_DECREF(frame);
            return 1;
        }
        PyFrameObject *back = caller_of(frame);
        Py_DECREF(frame);
        frame = back;
    }
    return 0;
}
#endif
