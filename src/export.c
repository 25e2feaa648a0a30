/*
 * export: writes KernelBench ModelNew files (export.h says what one holds). The Python
 * text is generated here from a fixed template; sources are embedded as raw string
 * literals when they can be (byte for byte as in the run), else as escaped literals.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build.h"
#include "export.h"
#include "store.h"
#include "util.h"

/* ================================================================ Python text */

/* A Python string literal holding s exactly: r'''...''' when s allows it, else "..." escaped. */
static void py_literal(strbuf *sb, const char *s)
{
    size_t n = strlen(s);
    if (!strstr(s, "'''") && !(n && s[n - 1] == '\\') && !(n && s[n - 1] == '\'') && !strchr(s, '\r')) {
        strbuf_adds(sb, "r'''");
        strbuf_adds(sb, s);
        strbuf_adds(sb, "'''");
        return;
    }
    strbuf_addc(sb, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '\\': strbuf_adds(sb, "\\\\"); break;
        case '"': strbuf_adds(sb, "\\\""); break;
        case '\n': strbuf_adds(sb, "\\n"); break;
        case '\r': strbuf_adds(sb, "\\r"); break;
        case '\t': strbuf_adds(sb, "\\t"); break;
        default:
            if (*p < 0x20)
                strbuf_addf(sb, "\\x%02x", *p);
            else
                strbuf_addc(sb, (char)*p);
        }
    }
    strbuf_addc(sb, '"');
}

static bool is_identifier(const char *s)
{
    static const char *const keywords[] = { "self", "False", "None", "True", "and", "as", "assert", "async",
                                            "await", "break", "class", "continue", "def", "del", "elif",
                                            "else", "except", "finally", "for", "from", "global", "if",
                                            "import", "in", "is", "lambda", "nonlocal", "not", "or", "pass",
                                            "raise", "return", "try", "while", "with", "yield", NULL };
    if (!s || !*s || (*s >= '0' && *s <= '9'))
        return false;
    for (const char *p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_'))
            return false;
    for (int i = 0; keywords[i]; i++)
        if (!strcmp(s, keywords[i]))
            return false;
    return true;
}

static const char *tensor_kind(json_t *t)
{
    const char *k = json_string_value(json_object_get(t, "kind"));
    if (!k)
        k = json_string_value(json_object_get(t, "role"));
    return k ? k : "input";
}

/* The binding: C++ compiled by nvcc after the kernel. Everything that needs torch sits in
 * the CG_EXPORT_NO_TORCH guard, so the rest can be compiled on its own as a check. */
static const char binding_source[] =
    "// ---- cutegen export binding: torch tensors -> cg_tensor, cg_forward on the current stream\n"
    "#include <stdexcept>\n"
    "#include <string>\n"
    "#include <vector>\n"
    "\n"
    "static void cg_export_fill(cg_tensor *t, void *data, int32_t dtype, int ndim, const int64_t *shape,\n"
    "                           const int64_t *stride)\n"
    "{\n"
    "    t->data = data;\n"
    "    t->dtype = dtype;\n"
    "    t->ndim = ndim;\n"
    "    for (int i = 0; i < CG_MAX_DIMS; i++) {\n"
    "        t->shape[i] = i < ndim ? shape[i] : 0;\n"
    "        t->stride[i] = i < ndim ? stride[i] : 0;\n"
    "    }\n"
    "}\n"
    "\n"
    "// Bytes of workspace the kernel asks for (0 when it defines no cg_workspace_bytes).\n"
    "static size_t cg_export_workspace(const cg_tensor *in, int n_in)\n"
    "{\n"
    "    return cg_workspace_bytes ? cg_workspace_bytes(in, n_in) : 0;\n"
    "}\n"
    "\n"
    "#ifndef CG_EXPORT_NO_TORCH\n"
    "#include <torch/extension.h>\n"
    "#include <ATen/cuda/CUDAContext.h>\n"
    "\n"
    "static int32_t cg_export_dtype(at::ScalarType t)\n"
    "{\n"
    "    switch (t) {\n"
    "    case at::kFloat: return CG_FLOAT32;\n"
    "    case at::kHalf: return CG_FLOAT16;\n"
    "    case at::kBFloat16: return CG_BFLOAT16;\n"
    "    case at::kDouble: return CG_FLOAT64;\n"
    "    case at::kLong: return CG_INT64;\n"
    "    case at::kInt: return CG_INT32;\n"
    "    case at::kShort: return CG_INT16;\n"
    "    case at::kChar: return CG_INT8;\n"
    "    case at::kByte: return CG_UINT8;\n"
    "    case at::kBool: return CG_BOOL;\n"
    "    default: TORCH_CHECK(false, \"cutegen export: unsupported dtype \", t); return -1;\n"
    "    }\n"
    "}\n"
    "\n"
    "static cg_tensor cg_export_tensor(const torch::Tensor &x)\n"
    "{\n"
    "    TORCH_CHECK(x.is_cuda(), \"cutegen export: every tensor must be on the GPU\");\n"
    "    TORCH_CHECK(x.dim() <= CG_MAX_DIMS, \"cutegen export: more than \", CG_MAX_DIMS, \" dimensions\");\n"
    "    cg_tensor t;\n"
    "    std::vector<int64_t> shape(x.sizes().begin(), x.sizes().end());\n"
    "    std::vector<int64_t> stride(x.strides().begin(), x.strides().end());\n"
    "    cg_export_fill(&t, x.data_ptr(), cg_export_dtype(x.scalar_type()), (int)x.dim(), shape.data(),\n"
    "                   stride.data());\n"
    "    return t;\n"
    "}\n"
    "\n"
    "void cg_run(std::vector<torch::Tensor> inputs, std::vector<torch::Tensor> outputs)\n"
    "{\n"
    "    std::vector<cg_tensor> in, out;\n"
    "    for (auto &x : inputs)\n"
    "        in.push_back(cg_export_tensor(x));\n"
    "    for (auto &y : outputs)\n"
    "        out.push_back(cg_export_tensor(y));\n"
    "    size_t ws = cg_export_workspace(in.data(), (int)in.size());\n"
    "    torch::Tensor w;\n"
    "    if (ws)\n"
    "        w = torch::empty({(int64_t)ws}, torch::dtype(torch::kUInt8).device(outputs.at(0).device()));\n"
    "    cudaStream_t stream = at::cuda::getCurrentCUDAStream().stream();\n"
    "    int rc = cg_forward(in.data(), (int)in.size(), out.data(), (int)out.size(),\n"
    "                        ws ? w.data_ptr() : nullptr, ws, stream);\n"
    "    TORCH_CHECK(rc == CG_OK, \"cutegen kernel: cg_forward returned \", rc,\n"
    "                rc == CG_UNSUPPORTED ? \" (unsupported shapes, strides or dtypes)\" : \"\");\n"
    "}\n"
    "#endif\n";

/* What precedes the kernel: the ABI, and cg_workspace_bytes made weak so a kernel that
 * does not define it links (its address is then null). */
static const char prelude_source[] =
    "#include <cutegen/abi.h>\n"
    "extern \"C\" __attribute__((weak)) size_t cg_workspace_bytes(const cg_tensor *inputs, int n_inputs);\n";

static const char python_body[] =
    "\n"
    "import hashlib as _cg_hashlib\n"
    "import os as _cg_os\n"
    "import tempfile as _cg_tempfile\n"
    "\n"
    "import torch as _cg_torch\n"
    "from torch.utils.cpp_extension import load_inline as _cg_load_inline\n"
    "\n"
    "_CG_CUDA_SOURCE = _CG_PRELUDE + '#line 1 \"kernel.cu\"\\n' + _CG_KERNEL_SOURCE + '\\n' + _CG_BINDING_SOURCE\n"
    "_CG_CPP_SOURCE = 'void cg_run(std::vector<torch::Tensor> inputs, std::vector<torch::Tensor> outputs);'\n"
    "_cg_ext = None\n"
    "\n"
    "\n"
    "def _cg_cutlass_include():\n"
    "    \"\"\"$CUTLASS_DIR (a checkout or its include/), else the nvidia-cutlass package, else the\n"
    "    directory cutegen used when it exported this file.\"\"\"\n"
    "    d = _cg_os.environ.get('CUTLASS_DIR')\n"
    "    if d:\n"
    "        return _cg_os.path.join(d, 'include') if _cg_os.path.isdir(_cg_os.path.join(d, 'include', 'cute')) else d\n"
    "    try:\n"
    "        import cutlass_library\n"
    "        d = _cg_os.path.join(_cg_os.path.dirname(cutlass_library.__file__), 'source', 'include')\n"
    "        if _cg_os.path.isdir(_cg_os.path.join(d, 'cute')):\n"
    "            return d\n"
    "    except ImportError:\n"
    "        pass\n"
    "    return _CG_CUTLASS_INCLUDE\n"
    "\n"
    "\n"
    "def _cg_build():\n"
    "    global _cg_ext\n"
    "    if _cg_ext is None:\n"
    "        digest = _cg_hashlib.sha256(_CG_CUDA_SOURCE.encode()).hexdigest()[:16]\n"
    "        inc = _cg_os.path.join(_cg_tempfile.gettempdir(), 'cutegen-abi-' + digest)\n"
    "        _cg_os.makedirs(_cg_os.path.join(inc, 'cutegen'), exist_ok=True)\n"
    "        # written only when missing or different: a new mtime on this header makes\n"
    "        # ninja rebuild the extension (a minute) in every process that loads the file\n"
    "        abi = _cg_os.path.join(inc, 'cutegen', 'abi.h')\n"
    "        try:\n"
    "            with open(abi) as f:\n"
    "                same = f.read() == _CG_ABI_HEADER\n"
    "        except OSError:\n"
    "            same = False\n"
    "        if not same:\n"
    "            tmp = '%s.%d' % (abi, _cg_os.getpid())\n"
    "            with open(tmp, 'w') as f:\n"
    "                f.write(_CG_ABI_HEADER)\n"
    "            _cg_os.replace(tmp, abi)\n"
    "        _cg_ext = _cg_load_inline(\n"
    "            name='cutegen_' + digest, cpp_sources=_CG_CPP_SOURCE, cuda_sources=_CG_CUDA_SOURCE,\n"
    "            functions=['cg_run'], extra_include_paths=[inc, _cg_cutlass_include()],\n"
    "            extra_cuda_cflags=_CG_NVCC_FLAGS, verbose=False)\n"
    "    return _cg_ext\n"
    "\n"
    "\n"
    "class ModelNew(Model):\n"
    "    \"\"\"The reference Model (same constructor, same parameters and buffers), whose forward\n"
    "    runs the cutegen kernel through its ABI.\"\"\"\n"
    "\n"
    "    def __init__(self, *args, **kwargs):\n"
    "        super().__init__(*args, **kwargs)\n"
    "        self._cg_refs = None\n"
    "        _cg_build()\n"
    "\n"
    "    def _cg_state(self):\n"
    "        if self._cg_refs is None:\n"
    "            refs = []\n"
    "            for name in _CG_STATE:\n"
    "                owner, _, attr = name.rpartition('.')\n"
    "                refs.append((self.get_submodule(owner) if owner else self, attr))\n"
    "            self._cg_refs = refs\n"
    "        return [getattr(m, a).detach() for m, a in self._cg_refs]\n"
    "\n"
    "    def _cg_forward(self, args):\n"
    "        if len(args) != len(_CG_ARGS):\n"
    "            raise TypeError('ModelNew.forward takes %d arguments, got %d' % (len(_CG_ARGS), len(args)))\n"
    "        state = self._cg_state()\n"
    "        dev = next((a.device for a in list(args) + state if isinstance(a, _cg_torch.Tensor)), None)\n"
    "        if dev is None or dev.type != 'cuda':\n"
    "            dev = _cg_torch.device('cuda', _cg_torch.cuda.current_device())\n"
    "        ins = []\n"
    "        for a, dtype in zip(args, _CG_ARGS):\n"
    "            if not isinstance(a, _cg_torch.Tensor):\n"
    "                a = _cg_torch.tensor(a, dtype=getattr(_cg_torch, dtype), device=dev)\n"
    "            ins.append(a)\n"
    "        outs = [_cg_torch.empty(shape, dtype=getattr(_cg_torch, dtype), device=dev)\n"
    "                for shape, dtype in _CG_OUTPUTS]\n"
    "        _cg_build().cg_run(ins + state, outs)\n"
    "        return outs[0] if len(outs) == 1 else tuple(outs)\n";

static void py_list_of_strings(strbuf *sb, json_t *arr, const char *kind_a, const char *kind_b)
{
    size_t i;
    json_t *t;
    strbuf_addc(sb, '[');
    bool first = true;
    json_array_foreach(arr, i, t) {
        const char *k = tensor_kind(t);
        if (strcmp(k, kind_a) && (!kind_b || strcmp(k, kind_b)))
            continue;
        const char *name = json_string_value(json_object_get(t, "name"));
        if (!first)
            strbuf_adds(sb, ", ");
        first = false;
        py_literal(sb, name ? name : "");
    }
    strbuf_addc(sb, ']');
}

int export_modelnew(strbuf *out, const char *name, const char *problem_source, const char *kernel_source,
                    json_t *spec, const char *abi_header, const char *cutlass_include, const char *arch,
                    const char *header, strbuf *err)
{
    json_t *inputs = json_object_get(spec, "inputs"), *outputs = json_object_get(spec, "outputs");
    if (!json_is_array(inputs) || !json_is_array(outputs) || !json_array_size(outputs)) {
        strbuf_addf(err, "task '%s' has no usable spec (inputs and outputs)", name);
        return -1;
    }
    if (!strstr(problem_source, "class Model")) {
        strbuf_addf(err, "the problem source of '%s' defines no class Model", name);
        return -1;
    }
    strbuf gencode = STRBUF_INIT;
    if (build_gencode(arch ? arch : "sm_90a", &gencode) < 0) {
        strbuf_addf(err, "bad arch '%s'", arch);
        strbuf_release(&gencode);
        return -1;
    }
    if (header)
        strbuf_adds(out, header);
    strbuf_adds(out, "# ---- the reference problem, verbatim: ModelNew subclasses its Model\n");
    strbuf_adds(out, problem_source);
    if (problem_source[0] && problem_source[strlen(problem_source) - 1] != '\n')
        strbuf_addc(out, '\n');
    strbuf_adds(out, "\n\n# ---- the kernel, verbatim (artifacts/nodes/<id>/kernel.cu of the run)\n_CG_KERNEL_SOURCE = ");
    py_literal(out, kernel_source);
    strbuf_adds(out, "\n\n# ---- cutegen/abi.h, written next to the build so that the kernel's #include finds it\n"
                     "_CG_ABI_HEADER = ");
    py_literal(out, abi_header);
    strbuf_adds(out, "\n\n_CG_PRELUDE = ");
    py_literal(out, prelude_source);
    strbuf_adds(out, "\n\n_CG_BINDING_SOURCE = ");
    py_literal(out, binding_source);
    strbuf_adds(out, "\n\n# forward()'s arguments (dtype used when one is a Python number), then the module's\n"
                     "# parameters and buffers in state_dict order, then the outputs (shape, dtype)\n_CG_ARGS = [");
    size_t i;
    json_t *t;
    bool first = true;
    strbuf argnames = STRBUF_INIT;
    bool names_ok = true;
    json_array_foreach(inputs, i, t) {
        if (strcmp(tensor_kind(t), "input"))
            continue;
        const char *dt = json_string_value(json_object_get(t, "dtype"));
        const char *nm = json_string_value(json_object_get(t, "name"));
        strbuf_adds(out, first ? "" : ", ");
        py_literal(out, dt ? dt : "float32");
        if (!is_identifier(nm) || strstr(strbuf_str(&argnames), nm))
            names_ok = false;
        strbuf_addf(&argnames, "%s%s", first ? "" : ", ", nm ? nm : "");
        first = false;
    }
    strbuf_adds(out, "]\n_CG_STATE = ");
    py_list_of_strings(out, inputs, "param", "buffer");
    strbuf_adds(out, "\n_CG_OUTPUTS = [");
    json_array_foreach(outputs, i, t) {
        json_t *shape = json_object_get(t, "shape");
        const char *dt = json_string_value(json_object_get(t, "dtype"));
        strbuf_adds(out, i ? ", ((" : "((");
        size_t k;
        json_t *d;
        json_array_foreach(shape, k, d) strbuf_addf(out, "%lld, ", (long long)json_integer_value(d));
        strbuf_adds(out, "), ");
        py_literal(out, dt ? dt : "float32");
        strbuf_addc(out, ')');
    }
    strbuf_adds(out, "]\n_CG_CUTLASS_INCLUDE = ");
    py_literal(out, cutlass_include ? cutlass_include : "");
    strbuf_addf(out, "\n_CG_NVCC_FLAGS = ['-O3', '-std=c++17', '--expt-relaxed-constexpr', '-lineinfo', '%s',\n"
                     "                  '-U__CUDA_NO_HALF_OPERATORS__', '-U__CUDA_NO_HALF_CONVERSIONS__',\n"
                     "                  '-U__CUDA_NO_BFLOAT16_CONVERSIONS__', '-U__CUDA_NO_HALF2_OPERATORS__']\n",
                gencode.buf);
    strbuf_adds(out, python_body);
    strbuf_adds(out, "\n    def forward(self, ");
    if (names_ok) {
        strbuf_addf(out, "%s):\n        return self._cg_forward((%s%s))\n", strbuf_str(&argnames), strbuf_str(&argnames),
                    argnames.len && !strchr(strbuf_str(&argnames), ',') ? "," : "");
    } else {
        strbuf_adds(out, "*args):\n        return self._cg_forward(args)\n");
    }
    strbuf_release(&argnames);
    strbuf_release(&gencode);
    return 0;
}

/* ================================================================ a run */

static char *read_whole(const char *path)
{
    strbuf sb = STRBUF_INIT;
    if (!path || read_file(path, &sb, 64u << 20) < 0) {
        strbuf_release(&sb);
        return NULL;
    }
    return strbuf_detach(&sb);
}

static int level_of(const char *path)
{
    int level = 0;
    for (const char *p = path; p && (p = strstr(p, "level")); ) {
        p += 5;
        if (*p == '_' || *p == '-')
            p++;
        if (*p >= '1' && *p <= '9')
            level = atoi(p);
    }
    return level;
}

/* The problem's source: the recorded path, else problems_dir/<name> (level subfolders too). */
static char *problem_source(const export_opts *o, const char *name, const char *path, const char *sha,
                            strbuf *log)
{
    char *src = read_whole(path);
    for (int lv = 0; !src && o->problems_dir && lv <= 4; lv++) {
        char *p = lv ? xasprintf("%s/level%d/%s", o->problems_dir, lv, name)
                     : xasprintf("%s/%s", o->problems_dir, name);
        src = read_whole(p);
        free(p);
    }
    if (src && sha) {
        char got[65];
        sha256_hex(src, strlen(src), got);
        if (strcmp(got, sha))
            strbuf_addf(log, "warning: %s: the problem file changed since the run (sha256 differs)\n", name);
    }
    return src;
}

static void file_name(strbuf *sb, const char *name, int level, const char *path)
{
    int id = (name[0] >= '0' && name[0] <= '9') ? atoi(name) : 0;
    if (!level)
        level = level_of(path);
    if (!level)
        level = level_of(name);
    if (level && id) {
        strbuf_addf(sb, "level_%d_problem_%d_sample_0_kernel.py", level, id);
        return;
    }
    for (const char *p = name; *p && strcmp(p, ".py"); p++)
        strbuf_addc(sb, ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                         *p == '_' || *p == '-') ? *p : '_');
    strbuf_adds(sb, "_kernel.py");
}

int export_run(const export_opts *o, strbuf *log, strbuf *err)
{
    if (o->format && strcmp(o->format, "kernelbench")) {
        strbuf_addf(err, "unknown export format '%s': use kernelbench", o->format);
        return -1;
    }
    char *abi_path = xasprintf("%s/include/cutegen/abi.h", cg_source_dir());
    char *abi = read_whole(abi_path);
    if (!abi) {
        strbuf_addf(err, "unable to read '%s': %s", abi_path, strerror(errno));
        free(abi_path);
        return -1;
    }
    free(abi_path);
    strbuf cut = STRBUF_INIT, cver = STRBUF_INIT, how = STRBUF_INIT;
    if (o->cutlass_include)
        strbuf_adds(&cut, o->cutlass_include);
    else if (cutlass_locate(NULL, &cut, &cver, &how) < 0)
        strbuf_reset(&cut); /* the exported file looks for it again where it runs */
    strbuf_release(&cver);
    strbuf_release(&how);

    store *s = NULL;
    int exported = -1;
    int64_t *ids = NULL;
    size_t n = 0;
    json_t *index = json_array();
    if (store_open(o->run_dir, false, &s, err) < 0)
        goto out;
    if (mkdir_p(o->out_dir, 0777) < 0) {
        strbuf_addf(err, "unable to make '%s': %s", o->out_dir, strerror(errno));
        goto out;
    }
    if (store_task_ids(s, &ids, &n) < 0) {
        strbuf_addf(err, "cannot list the tasks of '%s': %s", o->run_dir, store_error(s));
        goto out;
    }
    exported = 0;
    for (size_t i = 0; i < n; i++) {
        char *name = store_task_get(s, ids[i], "name");
        char *path = store_task_get(s, ids[i], "problem_path");
        char *sha = store_task_get(s, ids[i], "problem_sha256");
        char *spec_text = store_task_get(s, ids[i], "spec_json");
        char *lv = store_task_get(s, ids[i], "level");
        json_t *spec = spec_text ? json_loads(spec_text, 0, NULL) : NULL;
        int64_t best = store_best_node(s, ids[i]);
        store_node b;
        memset(&b, 0, sizeof b);
        char *kernel = NULL, *problem = NULL;
        strbuf fname = STRBUF_INIT, text = STRBUF_INIT, e = STRBUF_INIT;
        if (best <= 0) {
            strbuf_addf(log, "skipped %s: no correct kernel\n", name);
            goto next;
        }
        store_node_get(s, best, &b);
        kernel = read_whole(b.source_path);
        problem = problem_source(o, name, path, sha, log);
        if (!kernel || !problem) {
            strbuf_addf(log, "skipped %s: %s not found%s\n", name, kernel ? "the problem file" : "the kernel",
                        kernel && !o->problems_dir ? " (--problems DIR says where to look)" : "");
            goto next;
        }
        char *hdr = xasprintf("# Exported by cutegen %s from run %s: task %s, node %lld (%s, depth %d),\n"
                              "# %.4f ms, %.3fx over PyTorch eager as cutegen measured it.\n"
                              "# A KernelBench ModelNew: the CuTe kernel is built with load_inline and called\n"
                              "# through cutegen's ABI (docs/abi.md); docs/report.md says how to check it.\n\n",
                              CUTEGEN_VERSION, store_dir(s), name, (long long)best, b.kind, b.depth, b.time_ms,
                              b.speedup);
        int rc = export_modelnew(&text, name, problem, kernel, spec, abi, cut.buf, o->arch, hdr, &e);
        free(hdr);
        if (rc < 0) {
            strbuf_addf(log, "skipped %s: %s\n", name, e.buf);
            goto next;
        }
        file_name(&fname, name, lv ? atoi(lv) : 0, path);
        char *dst = xasprintf("%s/%s", o->out_dir, fname.buf);
        if (write_file_atomic(dst, text.buf, text.len) < 0) {
            strbuf_addf(err, "unable to write '%s': %s", dst, strerror(errno));
            free(dst);
            exported = -1;
        } else {
            strbuf_addf(log, "exported %s: %s\n", name, dst);
            free(dst);
            json_array_append_new(index, json_pack("{s:s, s:s, s:I, s:f, s:f}", "problem", name, "file", fname.buf,
                                                   "node", (json_int_t)best, "time_ms", b.time_ms,
                                                   "speedup_eager", isnan(b.speedup) ? 0.0 : b.speedup));
            exported++;
        }
    next:
        strbuf_release(&fname);
        strbuf_release(&text);
        strbuf_release(&e);
        if (best > 0)
            store_node_release(&b);
        free(kernel);
        free(problem);
        free(name);
        free(path);
        free(sha);
        free(spec_text);
        free(lv);
        json_decref(spec);
        if (exported < 0)
            goto out;
    }
    char *ip = xasprintf("%s/index.json", o->out_dir);
    /* Several runs may export into one directory (a sweep's problems): keep the entries
     * of other problems already listed there. */
    json_t *old = json_load_file(ip, 0, NULL);
    size_t k;
    json_t *e;
    json_array_foreach(old, k, e) {
        const char *prob = json_string_value(json_object_get(e, "problem"));
        bool replaced = false;
        size_t m;
        json_t *f;
        json_array_foreach(index, m, f)
            if (prob && !strcmp(prob, json_string_value(json_object_get(f, "problem")) ?: ""))
                replaced = true;
        if (!replaced)
            json_array_append(index, e);
    }
    json_decref(old);
    char *js = json_dumps(index, JSON_INDENT(1));
    if (write_file_atomic(ip, js, strlen(js)) < 0) {
        strbuf_addf(err, "unable to write '%s': %s", ip, strerror(errno));
        exported = -1;
    }
    free(js);
    free(ip);
out:
    json_decref(index);
    free(ids);
    if (s)
        store_close(s);
    free(abi);
    strbuf_release(&cut);
    return exported;
}
