/* pep726hook._scan._memfind: bytes.find() on top of the C library's memmem().
 *
 * `pep726hook scan` reads every .py file of an environment and looks for a
 * handful of names in the raw bytes before it decides what to parse.  Those
 * searches are most of the scanner's CPU time.  CPython's bytes.find() skips
 * ahead by one byte of lookahead, so needles made of letters common in Python
 * source ("r__", "modules") make it stop at most positions; glibc's memmem()
 * skips on pairs of bytes and is about three times faster on source text
 * (docs/scan.md has the measurements).
 *
 * find() has the semantics of bytes.find(), slice-style start and end
 * included; src/pep726hook/_scan/_filter.py falls back to bytes.find()
 * wherever this extension is not built (PyPy, no compiler).  It keeps no state, so it is
 * safe in sub-interpreters with their own GIL and without the GIL.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

/* memmem() is not standard C: glibc, musl, Android's bionic, macOS and the BSDs
 * have it (Python.h asks glibc and musl for it with _GNU_SOURCE); the Windows C
 * library and others do not, and get the portable search below.  Defining
 * PEP726HOOK_MEMFIND_PORTABLE forces the portable search anywhere, which is how
 * the tests check it on a machine that has memmem(). */
#if !defined(PEP726HOOK_MEMFIND_PORTABLE) && (defined(__linux__) || defined(__APPLE__) \
    || defined(__FreeBSD__) || defined(__NetBSD__) || defined(__OpenBSD__) \
    || defined(__DragonFly__))
#  define MEMFIND_USE_MEMMEM 1
#else
#  define MEMFIND_USE_MEMMEM 0
#endif

/* Offset of the first occurrence of needle in haystack, or -1. */
static Py_ssize_t
search(const char *haystack, Py_ssize_t length, const char *needle, Py_ssize_t needle_length)
{
    const char *found;
    if (needle_length == 0) {
        return 0;
    }
    if (needle_length > length) {
        return -1;
    }
#if MEMFIND_USE_MEMMEM
    found = (const char *)memmem(haystack, (size_t)length, needle, (size_t)needle_length);
#else
    {
        /* memchr() for the first byte, memcmp() for the rest. */
        const char *position = haystack;
        const char *last = haystack + (length - needle_length);
        found = NULL;
        while (position <= last) {
            position = (const char *)memchr(position, (unsigned char)needle[0],
                                            (size_t)(last - position) + 1);
            if (position == NULL) {
                break;
            }
            if (memcmp(position, needle, (size_t)needle_length) == 0) {
                found = position;
                break;
            }
            position++;
        }
    }
#endif
    return found == NULL ? -1 : found - haystack;
}

/* start/end the way bytes.find() reads them: None is the default, negative
 * values count from the end, and end is clamped to the length (a start past
 * the end simply finds nothing). */
static int
slice_index(PyObject *value, Py_ssize_t length, Py_ssize_t *result)
{
    Py_ssize_t index;
    if (value == Py_None) {
        return 0;
    }
    if (!PyIndex_Check(value)) {
        PyErr_Format(PyExc_TypeError,
                     "slice indices must be integers or None or have an __index__ method, "
                     "not '%.200s'", Py_TYPE(value)->tp_name);
        return -1;
    }
    /* Out-of-range integers clamp, as for slices. */
    index = PyNumber_AsSsize_t(value, NULL);
    if (index == -1 && PyErr_Occurred()) {
        return -1;
    }
    if (index < 0) {
        index += length;
        if (index < 0) {
            index = 0;
        }
    }
    *result = index;
    return 0;
}

PyDoc_STRVAR(find_doc,
"find($module, haystack, needle, start=None, end=None, /)\n"
"--\n"
"\n"
"Lowest index in haystack[start:end] where needle is found, or -1.\n"
"\n"
"The same as bytes.find() for any two C-contiguous buffers (bytes,\n"
"bytearray, memoryview), searched with memmem() where the C library has it.");

static PyObject *
find(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    Py_buffer haystack, needle;
    Py_ssize_t start = 0, end, offset = -1;

    if (nargs < 2 || nargs > 4) {
        PyErr_Format(PyExc_TypeError, "find() takes from 2 to 4 positional arguments (%zd given)",
                     nargs);
        return NULL;
    }
    if (PyObject_GetBuffer(args[0], &haystack, PyBUF_SIMPLE) < 0) {
        return NULL;
    }
    if (PyObject_GetBuffer(args[1], &needle, PyBUF_SIMPLE) < 0) {
        PyBuffer_Release(&haystack);
        return NULL;
    }
    end = haystack.len;
    if ((nargs > 2 && slice_index(args[2], haystack.len, &start) < 0) ||
        (nargs > 3 && slice_index(args[3], haystack.len, &end) < 0)) {
        PyBuffer_Release(&needle);
        PyBuffer_Release(&haystack);
        return NULL;
    }
    if (end > haystack.len) {
        end = haystack.len;
    }
    /* Also false when start is past the end: nothing is read out of bounds. */
    if (end - start >= needle.len) {
        offset = search((const char *)haystack.buf + start, end - start,
                        (const char *)needle.buf, needle.len);
        if (offset >= 0) {
            offset += start;
        }
    }
    PyBuffer_Release(&needle);
    PyBuffer_Release(&haystack);
    return PyLong_FromSsize_t(offset);
}

static PyMethodDef memfind_methods[] = {
    {"find", (PyCFunction)(void (*)(void))find, METH_FASTCALL, find_doc},
    {NULL, NULL, 0, NULL},
};

static PyModuleDef_Slot memfind_slots[] = {
#if PY_VERSION_HEX >= 0x030C0000
    {Py_mod_multiple_interpreters, Py_MOD_PER_INTERPRETER_GIL_SUPPORTED},
#endif
#if PY_VERSION_HEX >= 0x030D0000
    {Py_mod_gil, Py_MOD_GIL_NOT_USED},
#endif
    {0, NULL},
};

static struct PyModuleDef memfind_module = {
    PyModuleDef_HEAD_INIT,
    "pep726hook._scan._memfind",
    "bytes.find() on memmem(), for the scanner's byte-level pre-filter.",
    0,
    memfind_methods,
    memfind_slots,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC
PyInit__memfind(void)
{
    return PyModuleDef_Init(&memfind_module);
}
