"""Type stub for the optional C extension ``pep726hook._scan._memfind``.

The C function takes any C-contiguous buffers; the stub states what the
scanner passes, which is also what its ``bytes.find`` fallback takes.
"""

def find(
    haystack: bytes | bytearray,
    needle: bytes,
    start: int | None = None,
    end: int | None = None,
    /,
) -> int: ...
