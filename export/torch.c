/* `kforge export --torch`: a Python module that builds the kernel and its launcher (export/header.c's) as a
 * PyTorch extension with torch.utils.cpp_extension.load_inline and offers one function taking tensors:
 * dtypes, devices and shapes are checked, dims are read from the shapes, outputs are allocated, the plan
 * runs on the current stream. The test script compares it with the task's reference built the same way,
 * on the task's shapes and input distributions (mirroring verifier/inputs.c), within the task's tolerance. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "export/export_int.h"
#include "hash.h"

#define ADD(...)                                                                                             \
	do {                                                                                                 \
		if (!st)                                                                                     \
			st = kf_buf_addf(b, __VA_ARGS__);                                                    \
	} while (0)
#define ADDS(s)                                                                                              \
	do {                                                                                                 \
		if (!st)                                                                                     \
			st = kf_buf_adds(b, (s));                                                            \
	} while (0)

static const char py_helpers[] =
    "_I64_MIN, _I64_MAX = -(1 << 63), (1 << 63) - 1\n"
    "\n"
    "\n"
    "# The launch directives' integer arithmetic as kforge evaluates it: 64-bit, '/' truncates toward zero,\n"
    "# '%' takes the dividend's sign, cdiv is the ceiling for every sign, overflow is an error.\n"
    "def _e_chk(v):\n"
    "    if v < _I64_MIN or v > _I64_MAX:\n"
    "        raise ValueError(\"a shape expression overflows 64 bits\")\n"
    "    return v\n"
    "\n"
    "\n"
    "def _e_add(a, b):\n    return _e_chk(a + b)\n\n\n"
    "def _e_sub(a, b):\n    return _e_chk(a - b)\n\n\n"
    "def _e_mul(a, b):\n    return _e_chk(a * b)\n\n\n"
    "def _e_neg(a):\n    return _e_chk(-a)\n\n\n"
    "def _e_div(a, b):\n"
    "    if b == 0 or (a == _I64_MIN and b == -1):\n"
    "        raise ValueError(\"division by zero or overflow in a shape expression\")\n"
    "    q = abs(a) // abs(b)\n"
    "    return q if (a < 0) == (b < 0) else -q\n\n\n"
    "def _e_mod(a, b):\n    return a - _e_div(a, b) * b\n\n\n"
    "def _e_cdiv(a, b):\n"
    "    q = _e_div(a, b)\n"
    "    r = a - q * b\n"
    "    return q + 1 if r != 0 and (r > 0) == (b > 0) else q\n\n\n"
    "def _e_min(a, b):\n    return min(a, b)\n\n\n"
    "def _e_max(a, b):\n    return max(a, b)\n\n\n"
    "def _dim(D, name, value, where):\n"
    "    value = int(value)\n"
    "    if name in D and D[name] != value:\n"
    "        raise ValueError(f\"dim {name}: {where} is {value}, but {name} = {D[name]} elsewhere\")\n"
    "    D[name] = value\n\n\n"
    "def _tensor(name, t, dtype, rank, in_place):\n"
    "    if not isinstance(t, torch.Tensor):\n"
    "        raise TypeError(f\"{name} must be a torch.Tensor, not {type(t).__name__}\")\n"
    "    if not t.is_cuda:\n"
    "        raise ValueError(f\"{name} must be a CUDA tensor (it is on {t.device})\")\n"
    "    if t.dtype != dtype:\n"
    "        raise TypeError(f\"{name} must be {dtype}, not {t.dtype}\")\n"
    "    if t.dim() != rank:\n"
    "        raise ValueError(f\"{name} must have {rank} dimensions, not {t.dim()} (shape "
    "{tuple(t.shape)})\")\n"
    "    if in_place and not t.is_contiguous():\n"
    "        raise ValueError(f\"{name} is written in place and must be contiguous\")\n"
    "    return t.contiguous()\n\n\n"
    "def _check_shape(name, t, want, D):\n"
    "    if tuple(t.shape) != tuple(want):\n"
    "        dims = \", \".join(f\"{k}={v}\" for k, v in D.items())\n"
    "        raise ValueError(f\"{name} has shape {tuple(t.shape)}; at {dims} it must be {tuple(want)}\")\n";

/* The extension's C++ wrapper: checks, the workspace from torch's allocator, the launcher on the current
 * stream. */
static enum kf_status cpp_wrapper(struct kf_buf *b, const struct kf_task *t, const char *ident)
{
	enum kf_status st = KF_OK;
	size_t nf = 0, ni = 0;
	for (size_t i = 0; i < t->n_params; i++)
		kf_dtype_is_float(t->params[i].dtype) ? nf++ : ni++;
	ADD("\n#include <ATen/cuda/CUDAContext.h>\n#include <c10/cuda/CUDAGuard.h>\n#include <vector>\n\n");
	ADD("void launch(std::vector<torch::Tensor> tensors, std::vector<int64_t> dims, std::vector<double> "
	    "fparams,\n\t    std::vector<int64_t> iparams)\n{\n");
	ADD("\tTORCH_CHECK(tensors.size() == %zu && dims.size() == %zu && fparams.size() == %zu && "
	    "iparams.size() == %zu,\n\t\t    \"kforge_%s: launch() takes %zu tensors, %zu dims and %zu+%zu "
	    "params\");\n",
	    t->n_tensors, t->n_dims, nf, ni, ident, t->n_tensors, t->n_dims, nf, ni);
	ADD("\tstatic const at::ScalarType kf_types[] = {");
	for (size_t i = 0; i < t->n_tensors; i++)
		ADD("%s%s", i ? ", " : "", ex_aten_scalar(t->tensors[i].dtype));
	ADD("};\n\tstatic const char *const kf_names[] = {");
	for (size_t i = 0; i < t->n_tensors; i++) {
		ADD("%s\"", i ? ", " : "");
		if (!st)
			st = ex_c_string(b, t->tensors[i].name);
		ADD("\"");
	}
	ADD("};\n\tfor (size_t i = 0; i < tensors.size(); i++) {\n"
	    "\t\tTORCH_CHECK(tensors[i].is_cuda(), kf_names[i], \" must be a CUDA tensor\");\n"
	    "\t\tTORCH_CHECK(tensors[i].is_contiguous(), kf_names[i], \" must be contiguous\");\n"
	    "\t\tTORCH_CHECK(tensors[i].scalar_type() == kf_types[i], kf_names[i], \" has dtype \",\n"
	    "\t\t\t    tensors[i].scalar_type(), \", expected \", kf_types[i]);\n"
	    "\t\tTORCH_CHECK(tensors[i].device() == tensors[0].device(), kf_names[i], \" is on \", "
	    "tensors[i].device(),\n\t\t\t    \", not on \", tensors[0].device());\n\t}\n");
	ADD("\tconst c10::cuda::CUDAGuard kf_guard(tensors[0].device());\n");
	ADD("\tsize_t kf_ws = kforge_%s_workspace_bytes(", ident);
	for (size_t i = 0; i < t->n_dims; i++)
		ADD("%sdims[%zu]", i ? ", " : "", i);
	ADD(");\n\tTORCH_CHECK(kf_ws != SIZE_MAX, \"kforge_%s: the scratch buffers' sizes overflow at these "
	    "dims\");\n",
	    ident);
	ADD("\ttorch::Tensor kf_w;\n\tif (kf_ws)\n\t\tkf_w = torch::empty({(int64_t)kf_ws}, "
	    "tensors[0].options().dtype(at::kByte));\n");
	ADD("\tcudaError_t kf_e = kforge_%s_launch(", ident);
	for (size_t i = 0; i < t->n_tensors; i++) {
		const struct kf_tensor *x = &t->tensors[i];
		ADD("(%s%s *)tensors[%zu].data_ptr(), ", x->role == KF_ROLE_INPUT ? "const " : "",
		    ex_c_elem_type(x->dtype), i);
	}
	for (size_t i = 0; i < t->n_dims; i++)
		ADD("dims[%zu], ", i);
	nf = ni = 0;
	for (size_t i = 0; i < t->n_params; i++) {
		const struct kf_param *q = &t->params[i];
		if (kf_dtype_is_float(q->dtype))
			ADD("(%s)fparams[%zu], ", ex_c_param_type(q->dtype), nf++);
		else
			ADD("(%s)iparams[%zu], ", ex_c_param_type(q->dtype), ni++);
	}
	ADD("kf_ws ? kf_w.data_ptr() : nullptr, kf_ws,\n\t\t\t\t\t   at::cuda::getCurrentCUDAStream());\n");
	ADD("\tTORCH_CHECK(kf_e == cudaSuccess, \"kforge_%s_launch: \", cudaGetErrorString(kf_e));\n}\n",
	    ident);
	return st;
}

/* One exported kernel as Python: its sources, the shapes of its tensors, the lazy build and the function.
 * tag distinguishes the test script's reference ("_reference") from the module's own names (""). */
static enum kf_status py_body(struct kf_buf *b, const struct kf_task *t, const struct kf_kfile *k,
			      const char *ident, const char *fn, const char *tag, const char *origin,
			      struct kf_err *err)
{
	enum kf_status st = KF_OK;
	struct kf_buf cpp = KF_BUF_INIT((size_t)64 << 20);
	char nm[EX_NAME_MAX], hex[KF_SHA256_HEX];
	bool first;
	size_t n_out = 0;

	/* the extension's C++: the launcher (prototypes, kernel source, definitions) and the wrapper */
	st = ex_c_prototypes(&cpp, t, ident);
	if (!st)
		st = ex_c_implementation(&cpp, t, k, ident, origin, err);
	if (!st)
		st = cpp_wrapper(&cpp, t, ident);
	if (st) {
		kf_buf_release(&cpp);
		return st;
	}
	kf_sha256_hex(cpp.data, cpp.len, hex);
	ADD("_CUDA_SOURCE%s = ", tag);
	if (!st)
		st = ex_py_bytes(b, cpp.data, cpp.len, "    ");
	kf_buf_release(&cpp);
	ADD("\n_CPP_SOURCE%s = (\"void launch(std::vector<torch::Tensor> tensors, std::vector<int64_t> dims, "
	    "\"\n"
	    "    \"std::vector<double> fparams, std::vector<int64_t> iparams);\")\n",
	    tag);
	/* the extension's name carries the source's hash: two kernels never share a build */
	ADD("_EXT_NAME%s = \"kforge_%s_%.12s\"\n_ext%s = None\n\n\n", tag, ident, hex, tag);
	ADD("def load%s(verbose=False):\n"
	    "    \"\"\"Builds the extension (nvcc, about a minute the first time; torch caches it) and "
	    "returns "
	    "it.\"\"\"\n"
	    "    global _ext%s\n"
	    "    if _ext%s is None:\n"
	    "        from torch.utils.cpp_extension import load_inline\n"
	    "        # PyTorch compiles CUDA sources with __CUDA_NO_HALF_OPERATORS__ and friends; kforge's "
	    "NVRTC\n"
	    "        # compile has them, so the kernel may use them.\n"
	    "        _ext%s = load_inline(\n"
	    "            name=_EXT_NAME%s, cpp_sources=[_CPP_SOURCE%s], cuda_sources=[_CUDA_SOURCE%s],\n"
	    "            functions=[\"launch\"], verbose=verbose,\n"
	    "            extra_cuda_cflags=[\"-std=c++17\", \"-U__CUDA_NO_HALF_OPERATORS__\",\n"
	    "                               \"-U__CUDA_NO_HALF_CONVERSIONS__\", "
	    "\"-U__CUDA_NO_HALF2_OPERATORS__\",\n"
	    "                               \"-U__CUDA_NO_BFLOAT16_CONVERSIONS__\"])\n"
	    "    return _ext%s\n\n\n",
	    tag, tag, tag, tag, tag, tag, tag, tag);

	/* shapes of every tensor at dims D */
	ADD("def _shapes%s(D):\n    return {\n", tag);
	for (size_t i = 0; i < t->n_tensors && !st; i++) {
		const struct kf_tensor *x = &t->tensors[i];
		ADDS("        ");
		if (!st)
			st = ex_py_str(b, x->name);
		ADDS(": (");
		for (size_t r = 0; r < x->rank && !st; r++) {
			if (r)
				ADDS(", ");
			if (!st)
				st = ex_expr(b, EX_PY, x->shape[r], t, err);
		}
		ADD("%s),\n", x->rank == 1 ? "," : "");
	}
	ADDS("    }\n\n\n");

	/* the function */
	ADD("def %s(", fn);
	first = true;
	for (size_t i = 0; i < t->n_tensors; i++) {
		if (t->tensors[i].role == KF_ROLE_OUTPUT) {
			n_out++;
			continue;
		}
		if (t->tensors[i].role == KF_ROLE_INOUT)
			n_out++;
		ex_name(EX_PY, t->tensors[i].name, nm);
		ADD("%s%s", first ? "" : ", ", nm);
		first = false;
	}
	if (t->n_dims || t->n_params)
		ADD("%s*", first ? "" : ", ");
	for (size_t i = 0; i < t->n_dims; i++) {
		ex_name(EX_PY, t->dims[i], nm);
		ADD(", %s=None", nm);
	}
	for (size_t i = 0; i < t->n_params; i++) {
		const struct kf_param *q = &t->params[i];
		ex_name(EX_PY, q->name, nm);
		if (q->dtype == KF_DTYPE_F32)
			ADD(", %s=%.9g", nm, q->value);
		else if (kf_dtype_is_float(q->dtype))
			ADD(", %s=%.17g", nm, q->value);
		else
			ADD(", %s=%lld", nm, (long long)q->ivalue);
	}
	ADDS("):\n    \"\"\"");
	{
		char txt[400];
		ex_comment_text(t->title, txt, sizeof(txt));
		for (char *p = txt; *p; p++)
			if (*p == '"' || *p == '\\')
				*p = '\'';
		ADD("%s. Returns ", txt);
		first = true;
		for (size_t i = 0; i < t->n_tensors; i++)
			if (t->tensors[i].role != KF_ROLE_INPUT) {
				ex_comment_text(t->tensors[i].name, txt, sizeof(txt));
				for (char *p = txt; *p; p++)
					if (*p == '"' || *p == '\\')
						*p = '_';
				ADD("%s%s%s", first ? "" : ", ", txt,
				    t->tensors[i].role == KF_ROLE_INOUT ? " (written in place)" : "");
				first = false;
			}
		ADDS(n_out > 1 ? " as a tuple.\"\"\"\n" : ".\"\"\"\n");
	}
	ADDS("    D = {}\n");
	for (size_t i = 0; i < t->n_dims; i++) {
		ex_name(EX_PY, t->dims[i], nm);
		ADD("    if %s is not None:\n        _dim(D, \"%s\", %s, \"%s=\")\n", nm, t->dims[i], nm, nm);
	}
	for (size_t i = 0; i < t->n_tensors; i++) {
		const struct kf_tensor *x = &t->tensors[i];
		if (x->role == KF_ROLE_OUTPUT)
			continue;
		ex_name(EX_PY, x->name, nm);
		ADD("    %s = _tensor(\"%s\", %s, %s, %zu, %s)\n", nm, nm, nm, ex_torch_dtype(x->dtype),
		    x->rank, x->role == KF_ROLE_INOUT ? "True" : "False");
		for (size_t r = 0; r < x->rank; r++)
			if (kf_task_dim_index(t, x->shape[r]) >= 0)
				ADD("    _dim(D, \"%s\", %s.shape[%zu], \"%s.shape[%zu]\")\n", x->shape[r],
				    nm, r, nm, r);
	}
	ADDS("    for name in (");
	for (size_t i = 0; i < t->n_dims; i++)
		ADD("\"%s\", ", t->dims[i]);
	ADDS("):\n        if name not in D:\n"
	     "            raise TypeError(f\"{name} is not the size of any tensor argument: pass "
	     "{name}=...\")\n");
	ADD("    S = _shapes%s(D)\n", tag);
	first = true;
	for (size_t i = 0; i < t->n_tensors; i++) {
		const struct kf_tensor *x = &t->tensors[i];
		if (x->role == KF_ROLE_OUTPUT)
			continue;
		ex_name(EX_PY, x->name, nm);
		ADD("    _check_shape(\"%s\", %s, S[\"%s\"], D)\n", nm, nm, x->name);
		if (first) {
			ADD("    device = %s.device\n", nm);
			first = false;
		} else {
			ADD("    if %s.device != device:\n"
			    "        raise ValueError(f\"%s is on {%s.device}, not on {device}\")\n",
			    nm, nm, nm);
		}
	}
	if (first)
		ADDS("    device = torch.device(\"cuda\", torch.cuda.current_device())\n");
	for (size_t i = 0; i < t->n_tensors; i++) {
		const struct kf_tensor *x = &t->tensors[i];
		if (x->role != KF_ROLE_OUTPUT)
			continue;
		ex_name(EX_PY, x->name, nm);
		ADD("    %s = torch.empty(S[\"%s\"], dtype=%s, device=device)\n", nm, x->name,
		    ex_torch_dtype(x->dtype));
	}
	ADD("    load%s().launch([", tag);
	for (size_t i = 0; i < t->n_tensors; i++) {
		ex_name(EX_PY, t->tensors[i].name, nm);
		ADD("%s%s", i ? ", " : "", nm);
	}
	ADDS("], [");
	for (size_t i = 0; i < t->n_dims; i++)
		ADD("%sD[\"%s\"]", i ? ", " : "", t->dims[i]);
	ADDS("], [");
	first = true;
	for (size_t i = 0; i < t->n_params; i++)
		if (kf_dtype_is_float(t->params[i].dtype)) {
			ex_name(EX_PY, t->params[i].name, nm);
			ADD("%sfloat(%s)", first ? "" : ", ", nm);
			first = false;
		}
	ADDS("], [");
	first = true;
	for (size_t i = 0; i < t->n_params; i++)
		if (!kf_dtype_is_float(t->params[i].dtype)) {
			ex_name(EX_PY, t->params[i].name, nm);
			ADD("%sint(%s)", first ? "" : ", ", nm);
			first = false;
		}
	ADDS("])\n    return ");
	first = true;
	for (size_t i = 0; i < t->n_tensors; i++)
		if (t->tensors[i].role != KF_ROLE_INPUT) {
			ex_name(EX_PY, t->tensors[i].name, nm);
			ADD("%s%s", first ? "" : ", ", nm);
			first = false;
		}
	ADDS("\n");
	return st;
}

/* Text for a docstring: one line, no quote or backslash that could end or escape it. */
static void doc_text(const char *s, char *out, size_t n)
{
	ex_comment_text(s, out, n);
	for (char *p = out; *p; p++)
		if (*p == '"' || *p == '\\')
			*p = '\'';
}

static enum kf_status py_module_doc(struct kf_buf *b, const struct kf_task *t, const char *ident,
				    const char *origin)
{
	enum kf_status st = KF_OK;
	char txt[600];
	bool first = true;

	doc_text(t->title, txt, sizeof(txt));
	ADD("\"\"\"%s: %s (task %s), a kforge kernel as a PyTorch extension.\n\n", ident, txt, t->name);
	doc_text(origin, txt, sizeof(txt));
	ADD("Kernel: %s\n\n", txt);
	ADD("Generated by `kforge export --torch`. It runs on a machine with an NVIDIA GPU, PyTorch built "
	    "with\n"
	    "CUDA and the CUDA toolkit (nvcc): torch.utils.cpp_extension.load_inline compiles the extension "
	    "the\n"
	    "first time it is used (about a minute; cached afterwards). test_<this module>.py beside it "
	    "compares\n"
	    "it with the task's reference.\n\n    ");
	for (size_t i = 0; i < t->n_tensors; i++)
		if (t->tensors[i].role != KF_ROLE_INPUT) {
			doc_text(t->tensors[i].name, txt, sizeof(txt));
			ADD("%s%s", first ? "" : ", ", txt);
			first = false;
		}
	ADD(" = %s(", ident);
	first = true;
	for (size_t i = 0; i < t->n_tensors; i++) {
		const struct kf_tensor *x = &t->tensors[i];
		if (x->role == KF_ROLE_OUTPUT)
			continue;
		doc_text(x->name, txt, sizeof(txt));
		ADD("%s%s", first ? "" : ", ", txt);
		first = false;
	}
	ADDS(")\n\nTensors (CUDA; outputs are allocated and returned, inout tensors written in place):\n");
	for (size_t i = 0; i < t->n_tensors; i++) {
		const struct kf_tensor *x = &t->tensors[i];
		doc_text(x->name, txt, sizeof(txt));
		ADD("    %-10s %-6s %-15s [", txt, kf_role_name(x->role), ex_torch_dtype(x->dtype));
		for (size_t r = 0; r < x->rank; r++) {
			doc_text(x->shape[r], txt, sizeof(txt));
			ADD("%s%s", r ? ", " : "", txt);
		}
		ADDS("]\n");
	}
	ADDS("Dims are read from the tensors' shapes; a dim that is no tensor's size is a keyword "
	     "argument.\n");
	for (size_t i = 0; i < t->n_params; i++) {
		doc_text(t->params[i].name, txt, sizeof(txt));
		ADD("Param %s (keyword): the task's value is the default; kforge verified the kernel at "
		    "it.\n",
		    txt);
	}
	ADDS("\"\"\"\n");
	return st;
}

static enum kf_status py_test_doc(struct kf_buf *b, const struct kf_task *t, const char *ident,
				  const char *module)
{
	enum kf_status st = KF_OK;
	ADD("\"\"\"Tests %s.%s (kforge export --torch) against task %s's reference kernel.\n\n", module,
	    ident, t->name);
	ADD("Both are built as PyTorch extensions with the same launcher and run on the task's public and "
	    "hidden\n"
	    "shapes, with inputs drawn as kforge's verifier draws them (the task's distribution, mixed "
	    "signs, large\n"
	    "magnitudes, within each tensor's domain); every output must be within the task's tolerance. "
	    "--time\n"
	    "also times both at the timing shapes (CUDA events). Needs an NVIDIA GPU, PyTorch with CUDA and "
	    "nvcc.\n"
	    "Exit 0 all within tolerance, 1 a mismatch, 2 no GPU. kforge verify remains the authority: it "
	    "also\n"
	    "checks poisoned outputs, guard zones, edge shapes, determinism and more.\n\n"
	    "    python3 test_%s.py [--time] [--seeds N]\n\"\"\"\n",
	    module);
	return st;
}

enum kf_status kf_export_torch(const struct kf_task *t, const struct kf_kfile *k,
			       const struct kf_export_opts *o, struct kf_buf *out, struct kf_err *err)
{
	char ident[64];
	size_t mark = out->len;
	const char *origin = o && o->origin ? o->origin : k->path;
	enum kf_status st;
	struct kf_buf *b = out;

	if ((st = ex_ident(t, o, ident, err)) || (st = ex_check(t, k, err)))
		return st;
	st = py_module_doc(b, t, ident, origin);
	ADDS("import torch\n\n");
	ADDS(py_helpers);
	ADDS("\n\n");
	if (!st)
		st = py_body(b, t, k, ident, ident, "", origin, err);
	if (st) {
		out->len = mark;
		out->data[mark] = '\0';
		if (err && !err->code)
			kf_err_set(err, st, "cannot write the torch module: %s", kf_status_name(st));
	}
	return st;
}

/* ---- the test script ---- */

static enum kf_status py_shape_list(struct kf_buf *b, const char *label, const struct kf_shape *s, size_t n)
{
	enum kf_status st = KF_OK;
	for (size_t i = 0; i < n; i++) {
		ADD("    (\"%s\", {", label);
		for (size_t d = 0; d < s[i].n; d++)
			ADD("%s\"%s\": %lld", d ? ", " : "", s[i].names[d], (long long)s[i].values[d]);
		ADDS("}),\n");
	}
	return st;
}

static const char *dist_name(enum kf_dist d)
{
	return d == KF_DIST_NORMAL    ? "normal"
	       : d == KF_DIST_UNIFORM ? "uniform"
	       : d == KF_DIST_RANDINT ? "randint"
				      : "default";
}

/* verifier/inputs.c: the large-magnitude bound per dtype */
static double large_bound(enum kf_dtype dt)
{
	switch (dt) {
	case KF_DTYPE_F16:
	case KF_DTYPE_BF16:
		return 10.0;
	case KF_DTYPE_I8:
		return 100.0;
	case KF_DTYPE_U8:
		return 255.0;
	case KF_DTYPE_I16:
		return 10000.0;
	default:
		return 100.0;
	}
}

static const char test_main[] =
    "\n\ndef _fill(shape, dtype, spec, kind, g):\n"
    "    \"\"\"Values as kforge's verifier draws them (verifier/inputs.c): the task's distribution "
    "('init'),\n"
    "    mixed signs in [-2, 2] or large magnitudes, each kept inside the tensor's domain.\"\"\"\n"
    "    dist, a, b, lo, hi, large = spec\n"
    "    is_float = dtype.is_floating_point\n"
    "    if kind == \"init\":\n"
    "        if dist == \"normal\":\n"
    "            v = a + b * torch.randn(shape, generator=g, dtype=torch.float64, device=\"cuda\")\n"
    "        elif dist == \"uniform\":\n"
    "            v = a + (b - a) * torch.rand(shape, generator=g, dtype=torch.float64, device=\"cuda\")\n"
    "        elif dist == \"randint\":\n"
    "            span = b - a\n"
    "            u = torch.rand(shape, generator=g, dtype=torch.float64, device=\"cuda\")\n"
    "            v = a + torch.floor(u * span) if span >= 1 else torch.full(shape, float(a), "
    "dtype=torch.float64, device=\"cuda\")\n"
    "        elif is_float:\n"
    "            v = torch.randn(shape, generator=g, dtype=torch.float64, device=\"cuda\")\n"
    "        else:\n"
    "            v = torch.floor(torch.rand(shape, generator=g, dtype=torch.float64, device=\"cuda\") * "
    "17.0) - 8.0\n"
    "            if dtype == torch.uint8:\n"
    "                v = v.abs()\n"
    "        if lo is not None:\n"
    "            v = v.clamp(lo, hi)\n"
    "    else:\n"
    "        r_lo, r_hi = (-2.0, 2.0) if kind == \"mixed\" else (-large, large)\n"
    "        if lo is not None:\n"
    "            r_lo, r_hi = max(r_lo, lo), min(r_hi, hi)\n"
    "            r_hi = max(r_hi, r_lo)\n"
    "        v = r_lo + (r_hi - r_lo) * torch.rand(shape, generator=g, dtype=torch.float64, "
    "device=\"cuda\")\n"
    "        if not is_float:\n"
    "            v = torch.floor(v)\n"
    "    return v.to(dtype)\n"
    "\n\n"
    "def _kinds(spec):\n"
    "    \"\"\"The distributions the verifier uses for a tensor: an index-like (randint) tensor only its "
    "own.\"\"\"\n"
    "    dist, a, b, lo, hi, large = spec\n"
    "    kinds = [\"init\"]\n"
    "    if dist == \"randint\":\n"
    "        return kinds\n"
    "    if lo is None or (lo < 0 < hi):\n"
    "        kinds.append(\"mixed\")\n"
    "    if lo is None or hi - lo > 8.0:\n"
    "        kinds.append(\"large\")\n"
    "    return kinds\n"
    "\n\n"
    "def _compare(name, got, want, atol, rtol):\n"
    "    \"\"\"kforge's comparison order: NaN/Inf parity, then |got - want| <= atol + rtol * |want|.\"\"\"\n"
    "    if got.shape != want.shape:\n"
    "        return f\"{name}: shape {tuple(got.shape)}, expected {tuple(want.shape)}\", 0.0\n"
    "    g, w = got.double().flatten(), want.double().flatten()\n"
    "    fin = torch.isfinite(w)\n"
    "    bad_nan = (fin & ~torch.isfinite(g)) | (torch.isinf(w) & (g != w))\n"
    "    if bool(bad_nan.any()):\n"
    "        i = int(bad_nan.nonzero()[0])\n"
    "        return f\"{name}: nan_mismatch at [{i}]: got {g[i].item()}, want {w[i].item()}\", "
    "float(\"nan\")\n"
    "    diff = torch.where(fin, (g - w).abs(), torch.zeros_like(g))\n"
    "    bad = diff > atol + rtol * w.abs()\n"
    "    max_abs = float(diff.max()) if diff.numel() else 0.0\n"
    "    if bool(bad.any()):\n"
    "        i = int(bad.nonzero()[0])\n"
    "        return (f\"{name}: {int(bad.sum())} of {g.numel()} outside atol {atol:g} + rtol {rtol:g}; \"\n"
    "                f\"first at [{i}]: got {g[i].item()!r}, want {w[i].item()!r}\"), max_abs\n"
    "    return None, max_abs\n"
    "\n\n"
    "def _as_tuple(r):\n"
    "    return r if isinstance(r, tuple) else (r,)\n"
    "\n\n"
    "def _time(f, ins, D, reps):\n"
    "    for _ in range(3):\n"
    "        _call(f, ins, D)\n"
    "    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)\n"
    "    ms = []\n"
    "    for _ in range(reps):\n"
    "        start.record()\n"
    "        _call(f, ins, D)\n"
    "        end.record()\n"
    "        end.synchronize()\n"
    "        ms.append(start.elapsed_time(end))\n"
    "    ms.sort()\n"
    "    return ms[len(ms) // 2]\n"
    "\n\n"
    "def main():\n"
    "    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])\n"
    "    ap.add_argument(\"--seeds\", type=int, default=2, help=\"input seeds per shape and distribution\")\n"
    "    ap.add_argument(\"--time\", action=\"store_true\", help=\"also time both at the timing shapes\")\n"
    "    ap.add_argument(\"--reps\", type=int, default=50, help=\"timed launches per kernel (median)\")\n"
    "    args = ap.parse_args()\n"
    "    if not torch.cuda.is_available():\n"
    "        print(\"no CUDA GPU: this test runs where the extension can run\", file=sys.stderr)\n"
    "        return 2\n"
    "    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))\n"
    "    candidate = getattr(importlib.import_module(MODULE), FUNCTION)\n"
    "    n = n_bad = 0\n"
    "    for label, D in SHAPES:\n"
    "        dims = \", \".join(f\"{k}={v}\" for k, v in D.items())\n"
    "        kinds = []\n"
    "        for spec in INPUTS.values():\n"
    "            kinds += [k for k in _kinds(spec) if k not in kinds]\n"
    "        for kind in kinds or [\"init\"]:\n"
    "            for seed in range(1, args.seeds + 1):\n"
    "                g = torch.Generator(device=\"cuda\")\n"
    "                g.manual_seed(seed)\n"
    "                shapes = _shapes_reference(D)\n"
    "                ins = {}\n"
    "                for name, spec in INPUTS.items():\n"
    "                    k = kind if kind in _kinds(spec) else \"init\"\n"
    "                    ins[name] = _fill(shapes[name], DTYPES[name], spec, k, g)\n"
    "                want = _as_tuple(_call(reference, {k: v.clone() for k, v in ins.items()}, D))\n"
    "                got = _as_tuple(_call(candidate, {k: v.clone() for k, v in ins.items()}, D))\n"
    "                torch.cuda.synchronize()\n"
    "                problems, worst = [], 0.0\n"
    "                for name, gv, wv in zip(RESULTS, got, want):\n"
    "                    atol, rtol = TOLERANCE[name]\n"
    "                    p, m = _compare(name, gv, wv, atol, rtol)\n"
    "                    worst = max(worst, m) if m == m else m\n"
    "                    if p:\n"
    "                        problems.append(p)\n"
    "                n += 1\n"
    "                if problems:\n"
    "                    n_bad += 1\n"
    "                    print(f\"FAIL {label} {dims} {kind} seed {seed}: {'; '.join(problems)}\")\n"
    "                else:\n"
    "                    print(f\"ok   {label} {dims} {kind} seed {seed}: max abs error {worst:.3g}\")\n"
    "    print(f\"{n} cases, {n_bad} failed\")\n"
    "    if args.time and not n_bad:\n"
    "        for D in TIMING:\n"
    "            dims = \", \".join(f\"{k}={v}\" for k, v in D.items())\n"
    "            g = torch.Generator(device=\"cuda\")\n"
    "            g.manual_seed(1)\n"
    "            shapes = _shapes_reference(D)\n"
    "            ins = {name: _fill(shapes[name], DTYPES[name], spec, \"init\", g) for name, spec in "
    "INPUTS.items()}\n"
    "            t_ref = _time(reference, ins, D, args.reps)\n"
    "            t_cand = _time(candidate, ins, D, args.reps)\n"
    "            print(f\"time {dims}: candidate {t_cand:.4f} ms, reference {t_ref:.4f} ms, \"\n"
    "                  f\"{t_ref / t_cand:.2f}x (GPU times, CUDA events, median of {args.reps}; no L2 "
    "flush)\")\n"
    "    return 1 if n_bad else 0\n"
    "\n\n"
    "if __name__ == \"__main__\":\n"
    "    sys.exit(main())\n";

enum kf_status kf_export_torch_test(const struct kf_task *t, const struct kf_kfile *ref,
				    const struct kf_export_opts *o, const char *module_name,
				    struct kf_buf *out, struct kf_err *err)
{
	char ident[64], ref_ident[80], nm[EX_NAME_MAX];
	size_t mark = out->len;
	enum kf_status st;
	struct kf_buf *b = out;
	bool first;

	if ((st = ex_ident(t, o, ident, err)))
		return st;
	if (!kf_export_ident_ok(module_name))
		return kf_err_set(err, KF_ERR_INVALID, "'%.80s' is not a Python module name", module_name);
	if ((st = ex_check(t, ref, err)))
		return st;
	snprintf(ref_ident, sizeof(ref_ident), "%s_reference", ident);
	st = py_test_doc(b, t, ident, module_name);
	ADDS("import argparse\nimport importlib\nimport os\nimport sys\n\nimport torch\n\n");
	ADD("MODULE = \"%s\"\nFUNCTION = \"%s\"\n\n", module_name, ident);
	ADDS(py_helpers);
	ADDS("\n\n");
	if (!st)
		st = py_body(b, t, ref, ref_ident, "reference", "_reference", ref->path, err);

	ADDS("\n\nSHAPES = [\n");
	if (!st)
		st = py_shape_list(b, "public", t->shapes_public, t->n_public);
	if (!st)
		st = py_shape_list(b, "hidden", t->shapes_hidden, t->n_hidden);
	ADDS("]\nTIMING = [D for _, D in [\n");
	if (!st)
		st = py_shape_list(b, "timing", t->shapes_timing, t->n_timing);
	ADDS("]]\n# name: (distribution, a, b, domain lo, domain hi, large-magnitude bound)\nINPUTS = {\n");
	for (size_t i = 0; i < t->n_tensors; i++) {
		const struct kf_tensor *x = &t->tensors[i];
		if (x->role == KF_ROLE_OUTPUT)
			continue;
		ADD("    \"%s\": (\"%s\", %.17g, %.17g, ", x->name, dist_name(x->init.dist), x->init.a,
		    x->init.b);
		if (x->has_domain)
			ADD("%.17g, %.17g, ", x->domain_lo, x->domain_hi);
		else
			ADDS("None, None, ");
		ADD("%.17g),\n", large_bound(x->dtype));
	}
	ADDS("}\nDTYPES = {\n");
	for (size_t i = 0; i < t->n_tensors; i++)
		ADD("    \"%s\": %s,\n", t->tensors[i].name, ex_torch_dtype(t->tensors[i].dtype));
	ADDS("}\nRESULTS = (");
	for (size_t i = 0; i < t->n_tensors; i++)
		if (t->tensors[i].role != KF_ROLE_INPUT)
			ADD("\"%s\", ", t->tensors[i].name);
	ADDS(")\n# the task's tolerance per output (its dtype's, or the project default)\nTOLERANCE = {\n");
	for (size_t i = 0; i < t->n_tensors; i++)
		if (t->tensors[i].role != KF_ROLE_INPUT) {
			struct kf_tol tol = kf_task_tolerance(t, t->tensors[i].dtype);
			ADD("    \"%s\": (%.17g, %.17g),\n", t->tensors[i].name, tol.atol, tol.rtol);
		}
	ADDS("}\n\n\ndef _call(f, ins, D):\n    return f(");
	first = true;
	for (size_t i = 0; i < t->n_tensors; i++)
		if (t->tensors[i].role != KF_ROLE_OUTPUT) {
			ADD("%sins[\"%s\"]", first ? "" : ", ", t->tensors[i].name);
			first = false;
		}
	for (size_t i = 0; i < t->n_dims; i++) {
		ex_name(EX_PY, t->dims[i], nm);
		ADD("%s%s=D[\"%s\"]", first ? "" : ", ", nm, t->dims[i]);
		first = false;
	}
	ADDS(")\n");
	ADDS(test_main);
	if (st) {
		out->len = mark;
		out->data[mark] = '\0';
		if (err && !err->code)
			kf_err_set(err, st, "cannot write the test script: %s", kf_status_name(st));
	}
	return st;
}
