"""The register limit of the C host code (``mcl gen --host c --max-registers N``): C
functions that write ``.maxnreg N`` into the PTX of a program NVIDIA's driver built and
build the program again from it, as :func:`mcl.opencl.vendor.rebuild_capped` does for
the Python runtime (that driver ignores ``-cl-nv-maxrregcount``)."""

from __future__ import annotations

#: ``mcl_cap_registers``: :func:`mcl.opencl.vendor.cap_registers` in C, character for
#: character on ASCII text (PTX is). Needs <stdio.h>, <stdlib.h>, <string.h>, <CL/cl.h>.
CAP_REGISTERS = r"""
/* Python's \s and \w on ASCII text, as vendor.cap_registers matches them. */
static int mcl_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static int mcl_word(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
        || c == '_';
}

static int mcl_digit(char c) { return c >= '0' && c <= '9'; }

static const char *mcl_skip_space(const char *s, const char *end)
{
    while (s < end && mcl_space(*s))
        s++;
    return s;
}

/* The end of ".entry NAME(PARAMETERS)" at s, or NULL where none starts there. */
static const char *mcl_entry_head(const char *s, const char *end)
{
    const char *p = s + 6;   /* after ".entry" */
    if (p >= end || !mcl_space(*p))
        return NULL;
    p = mcl_skip_space(p, end);
    if (p >= end || !((mcl_word(*p) && !mcl_digit(*p)) || *p == '$'))
        return NULL;
    while (p < end && (mcl_word(*p) || *p == '$'))
        p++;
    p = mcl_skip_space(p, end);
    if (p >= end || *p != '(')
        return NULL;
    while (p < end && *p != ')')
        p++;
    return p < end ? p + 1 : NULL;
}

/* The end of the directives on the number of threads and registers that follow an
 * entry's parameter list at s (s itself where there are none). */
static const char *mcl_entry_directives(const char *s, const char *end)
{
    static const char *const names[] = {"maxnreg", "reqntid", "maxntid", "minnctapersm"};
    for (;;) {
        const char *p = mcl_skip_space(s, end);
        size_t i, n = 0;
        if (p >= end || *p != '.')
            return s;
        p++;
        for (i = 0; i < sizeof names / sizeof names[0]; i++) {
            n = strlen(names[i]);
            if ((size_t)(end - p) >= n && memcmp(p, names[i], n) == 0
                    && (p + n == end || !mcl_word(p[n])))
                break;
        }
        if (i == sizeof names / sizeof names[0])
            return s;
        for (p += n; p < end && *p != '\n' && *p != '{'; p++)
            ;
        s = p;
    }
}

/* Copies [s, end) to out less each ".maxnreg N" and the white space before it; returns
 * the end of what it wrote. */
static char *mcl_copy_without_maxnreg(char *out, const char *s, const char *end)
{
    while (s < end) {
        const char *p = mcl_skip_space(s, end);
        if ((size_t)(end - p) > 8 && memcmp(p, ".maxnreg", 8) == 0 && mcl_space(p[8])) {
            const char *d = mcl_skip_space(p + 8, end);
            if (d < end && mcl_digit(*d)) {
                while (d < end && mcl_digit(*d))
                    d++;
                s = d;
                continue;
            }
        }
        *out++ = *s++;
    }
    return out;
}

/* The PTX text ptx with ".maxnreg limit" on every kernel entry, after its parameter
 * list (a .maxnreg already there is replaced): *capped receives it (free() it).
 * CL_INVALID_BINARY, *capped NULL, where the PTX has no kernel entry (.entry). */
static cl_int mcl_cap_registers(const char *ptx, int limit, char **capped)
{
    const char *end = ptx + strlen(ptx), *copied = ptx, *at;
    size_t entries = 0;
    char *out;
    for (at = strstr(ptx, ".entry"); at != NULL; at = strstr(at + 1, ".entry"))
        entries++;
    /* each entry gains "\n.maxnreg " and at most 11 digits and sign */
    *capped = (char *)malloc((size_t)(end - ptx) + 24 * entries + 1);
    if (*capped == NULL)
        return CL_OUT_OF_HOST_MEMORY;
    out = *capped;
    entries = 0;
    for (at = strstr(ptx, ".entry"); at != NULL; at = strstr(at, ".entry")) {
        const char *head = mcl_entry_head(at, end), *tail;
        if (head == NULL) {
            at++;
            continue;
        }
        tail = mcl_entry_directives(head, end);
        memcpy(out, copied, (size_t)(head - copied));
        out += head - copied;
        out += sprintf(out, "\n.maxnreg %d", limit);
        out = mcl_copy_without_maxnreg(out, head, tail);
        copied = at = tail;
        entries++;
    }
    strcpy(out, copied);
    if (entries == 0) {
        free(*capped);
        *capped = NULL;
        return CL_INVALID_BINARY;
    }
    return CL_SUCCESS;
}
"""

#: ``mcl_platform_name``: the name of a device's platform, which chooses the
#: per-platform build options and whether a register limit applies.
PLATFORM_NAME = r"""
/* The name of device's platform in *name (allocated; the caller frees it). */
static cl_int mcl_platform_name(cl_device_id device, char **name)
{
    cl_platform_id platform;
    size_t size = 0;
    cl_int err = clGetDeviceInfo(device, CL_DEVICE_PLATFORM, sizeof platform, &platform, NULL);
    *name = NULL;
    if (err == CL_SUCCESS)
        err = clGetPlatformInfo(platform, CL_PLATFORM_NAME, 0, NULL, &size);
    if (err != CL_SUCCESS)
        return err;
    *name = (char *)malloc(size + 1);
    if (*name == NULL)
        return CL_OUT_OF_HOST_MEMORY;
    err = clGetPlatformInfo(platform, CL_PLATFORM_NAME, size, *name, NULL);
    (*name)[size] = 0;
    return err;
}
"""

#: ``mcl_takes_register_limit`` and ``mcl_rebuild_capped``: the platform's answer and
#: the rebuild (needs :data:`CAP_REGISTERS`, :data:`PLATFORM_NAME` and the host's
#: ``mcl_build``).
REBUILD_CAPPED = r"""
/* Whether the device's platform is NVIDIA's: its driver builds programs to PTX, which
 * takes a register limit (mcl.opencl.device.takes_register_limit). */
static cl_int mcl_takes_register_limit(cl_device_id device, int *takes)
{
    char *name = NULL;
    cl_int err = mcl_platform_name(device, &name);
    *takes = err == CL_SUCCESS && strstr(name, "NVIDIA") != NULL;
    free(name);
    return err;
}

/* *program, built for device by NVIDIA's driver (its binary is PTX), built again with the
 * same options from its PTX with at most limit registers per work-item; the old program
 * is released. On failure *program stays as it was. */
static cl_int mcl_rebuild_capped(cl_context context, cl_device_id device,
                                 const char *options, int limit, cl_program *program,
                                 char **log)
{
    cl_uint count = 0, i, at;
    cl_device_id *devices = NULL;
    size_t *sizes = NULL;
    unsigned char **binaries = NULL;
    char *capped = NULL;
    cl_program rebuilt = NULL;
    cl_int err = clGetProgramInfo(*program, CL_PROGRAM_NUM_DEVICES, sizeof count, &count,
                                  NULL);
    if (err != CL_SUCCESS)
        return err;
    devices = (cl_device_id *)malloc(count * sizeof *devices);
    sizes = (size_t *)malloc(count * sizeof *sizes);
    binaries = (unsigned char **)calloc(count, sizeof *binaries);
    if (devices == NULL || sizes == NULL || binaries == NULL)
        err = CL_OUT_OF_HOST_MEMORY;
    if (err == CL_SUCCESS)
        err = clGetProgramInfo(*program, CL_PROGRAM_DEVICES, count * sizeof *devices,
                               devices, NULL);
    if (err == CL_SUCCESS)
        err = clGetProgramInfo(*program, CL_PROGRAM_BINARY_SIZES, count * sizeof *sizes,
                               sizes, NULL);
    for (i = 0, at = count; err == CL_SUCCESS && i < count; i++) {
        binaries[i] = (unsigned char *)malloc(sizes[i] + 1);
        if (binaries[i] == NULL)
            err = CL_OUT_OF_HOST_MEMORY;
        if (devices[i] == device)
            at = i;
    }
    if (err == CL_SUCCESS && at == count)
        err = CL_INVALID_DEVICE;
    if (err == CL_SUCCESS)
        err = clGetProgramInfo(*program, CL_PROGRAM_BINARIES, count * sizeof *binaries,
                               binaries, NULL);
    if (err == CL_SUCCESS) {
        binaries[at][sizes[at]] = 0;   /* text, whether or not the driver ends it with NUL */
        err = mcl_cap_registers((const char *)binaries[at], limit, &capped);
    }
    if (err == CL_SUCCESS) {
        size_t length = strlen(capped) + 1;
        const unsigned char *binary = (const unsigned char *)capped;
        rebuilt = clCreateProgramWithBinary(context, 1, &device, &length, &binary, NULL,
                                            &err);
    }
    if (err == CL_SUCCESS)
        err = mcl_build(rebuilt, device, options, log);
    if (err == CL_SUCCESS) {
        clReleaseProgram(*program);
        *program = rebuilt;
    } else if (rebuilt != NULL) {
        clReleaseProgram(rebuilt);
    }
    for (i = 0; binaries != NULL && i < count; i++)
        free(binaries[i]);
    free(binaries);
    free(sizes);
    free(devices);
    free(capped);
    return err;
}
"""
