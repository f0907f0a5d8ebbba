#!/usr/bin/env bash
# kforge-test: parallel (no timing checks: tests/run.sh may run it beside another script)
# kforge export: --header for every example task (references and baselines) and a multi-kernel task with a
# scratch buffer and a param, compiled with nvcc, plus a host program in C (gcc) that includes the header
# and calls the launcher with no GPU present (the argument, configuration and workspace checks answer
# before the driver is needed) and a .cu program checking the expression helpers' semantics; --torch
# modules and their test scripts byte-compiled and run against a stand-in torch (tests/data/export), the
# real run being on a GPU machine; run:N and cand:N from an imported run; usage and input errors.
source "$(dirname "$0")/lib.sh"
EX=$TOP/tasks/examples
GBL=$TOP/tasks/l2/gemm_bias_layernorm_f32
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
cd "$TMP"

# ---- headers ----
for spec in vector_add_f32:reference vector_add_f32:baseline softmax_rows_f32:reference softmax_rows_f32:baseline \
	matmul_f32:reference; do
	t=${spec%%:*} k=${spec##*:}
	expect_exit 0 "export --header $t/$k" -- "$KFORGE" export "$EX/$t/$k.cu" --task "$EX/$t/task.json" --header -o "$t-$k.h"
done
expect_exit 0 "export --header of a two-launch plan with scratch and a param" -- \
	"$KFORGE" export "$GBL/reference.cu" --task "$GBL/task.json" --header -o gbl.h
expect_exit 0 "export --header to stdout" -- "$KFORGE" export "$EX/vector_add_f32/reference.cu" --task "$EX/vector_add_f32/task.json" --header
grep -q "kforge_vector_add_f32_launch(const float \*a, const float \*b, float \*c, int64_t N, void \*workspace" <<<"$OUT_TXT" &&
	ok "stdout has the launcher's prototype" || bad "stdout: $(head -c 300 <<<"$OUT_TXT")"
grep -q "scratch h: f32 x (M\*N) elements" gbl.h && grep -q "2. layernorm_rows grid=(cdiv(M,128))" gbl.h &&
	ok "the header documents the plan" || bad "gbl.h lacks the plan comment"

if [ ! -x "$NVCC" ]; then
	skip "nvcc compiles of the headers ($NVCC not found)"
else
	for h in *.h; do
		id=$(sed -n 's/^#ifdef KFORGE_\(.*\)_IMPLEMENTATION$/\1/p' "$h" | head -1)
		printf '#define KFORGE_%s_IMPLEMENTATION\n#include "%s"\n' "$id" "$h" >"${h%.h}.cu"
		if "$NVCC" -std=c++17 -arch=sm_90 -Werror all-warnings -c "${h%.h}.cu" -o "${h%.h}.o" 2>"$h.log"; then
			ok "nvcc compiles $h"
		else
			bad "nvcc $h: $(head -c 600 "$h.log")"
		fi
	done
	# Kernels as people write them (tests/data/real): template instantiations, kforge:zero fills, integer
	# expressions as arguments, unsigned and size_t parameters, two instantiations in one plan.
	R=$TOP/tests/data/real
	while read -r kern task verdict; do
		case "$kern" in "#"* | "") continue ;; esac
		[ "$verdict" = pass ] || continue
		h="real-${kern%.cu}-$task.h"
		if ! "$KFORGE" export "$R/kernels/$kern" --task "$R/$task/task.json" --header --name "r_$task" -o "$h" >/dev/null 2>"$h.err"; then
			bad "export $kern for $task: $(head -c 400 "$h.err")"
			continue
		fi
		printf '#define KFORGE_%s_IMPLEMENTATION\n#include "%s"\n' "$(echo "r_$task" | tr a-z A-Z)" "$h" >"${h%.h}.cu"
		"$NVCC" -std=c++17 -arch=sm_90 -Werror all-warnings -c "${h%.h}.cu" -o /dev/null 2>"$h.log" &&
			ok "nvcc compiles the export of $kern ($task)" || bad "nvcc $h: $(head -c 600 "$h.log")"
	done <"$R/expected.txt"
	grep -q "cudaMemsetAsync(kf_p, 0x00, kf_n, stream)" real-global_norm-global_norm_f32.h &&
		grep -q "(const void \*)&global_norm_squared_kernel<float>" real-global_norm-global_norm_f32.h &&
		ok "the zero fill and the template instantiation are in the launcher" || bad "global_norm: no memset or template launch"
	# A host program in C that includes the headers without the implementation and links the objects.
	cat >host.c <<'EOF'
#include <stdio.h>
#include "gbl.h"
#include "matmul_f32-reference.h"
#include "vector_add_f32-reference.h"

int main(void)
{
	char ws[256];
	/* the scratch h holds M*N floats, rounded up to 256 bytes */
	printf("ws %zu\n", kforge_gemm_bias_layernorm_f32_workspace_bytes(100, 30, 7));
	printf("ws_overflow %d\n", kforge_gemm_bias_layernorm_f32_workspace_bytes(1LL << 40, 1LL << 40, 1) == SIZE_MAX);
	/* a workspace that is too small is refused before any CUDA call */
	printf("small_ws %d\n", (int)kforge_gemm_bias_layernorm_f32_launch(0, 0, 0, 0, 0, 0, 100, 30, 7,
			KFORGE_GEMM_BIAS_LAYERNORM_F32_eps, ws, sizeof(ws), 0));
	/* grid y = cdiv(M,16) = 70000 is over CUDA's 65535 */
	printf("grid %d\n", (int)kforge_matmul_f32_launch(0, 0, 0, 16 * 70000, 16, 16, NULL, 0, 0));
	/* N does not fit the kernel's int parameter */
	printf("int_arg %d\n", (int)kforge_vector_add_f32_launch(0, 0, 0, 1LL << 32, NULL, 0, 0));
	/* a valid launch reaches the runtime, which has no GPU here: an error, never success */
	printf("no_gpu %d\n", (int)kforge_vector_add_f32_launch(0, 0, 0, 1000, NULL, 0, 0) != 0);
	return 0;
}
EOF
	if gcc -std=c11 -Wall -Wextra -Werror -I"$CUDA_HOME/include" -c host.c -o host.o 2>host.log &&
		g++ -o host host.o gbl.o matmul_f32-reference.o vector_add_f32-reference.o -L"$CUDA_HOME/lib64" \
			-lcudart_static -ldl -lpthread -lrt 2>>host.log; then
		ok "a C program includes the headers and links the launchers"
		./host >host.out 2>&1
		# cudaErrorInvalidValue = 1, cudaErrorInvalidConfiguration = 9
		want=$'ws 12032\nws_overflow 1\nsmall_ws 1\ngrid 9\nint_arg 1\nno_gpu 1'
		[ "$(cat host.out)" = "$want" ] && ok "launcher checks: workspace size, overflow, small workspace, grid limit, int range" ||
			bad "host program printed: $(cat host.out)"
	else
		bad "host program: $(head -c 600 host.log)"
	fi
	# The expression helpers' semantics (core/expr.c): truncating '/', dividend-signed '%', cdiv the ceiling.
	cat >helpers.cu <<'EOF'
#define KFORGE_VECTOR_ADD_F32_IMPLEMENTATION
#include "vector_add_f32-reference.h"
#include <stdio.h>
int main(void)
{
	int bad = 0;
	long long v[] = {kforge_e_cdiv(7, 2, &bad), kforge_e_cdiv(-7, 2, &bad), kforge_e_cdiv(7, -2, &bad),
			 kforge_e_cdiv(-7, -2, &bad), kforge_e_cdiv(6, 3, &bad), kforge_e_div(-7, 2, &bad),
			 kforge_e_mod(-7, 2, &bad), kforge_e_mod(7, -2, &bad), kforge_e_min(-3, 2, &bad),
			 kforge_e_max(-3, 2, &bad), kforge_e_sub(0, 5, &bad)};
	for (unsigned i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		printf("%lld ", v[i]);
	printf("| %d", bad);
	kforge_e_div(1, 0, &bad);
	printf(" %d", bad);
	bad = 0;
	kforge_e_mul(1LL << 62, 4, &bad);
	printf(" %d", bad);
	bad = 0;
	kforge_e_div(LLONG_MIN, -1, &bad);
	printf(" %d\n", bad);
	return 0;
}
EOF
	if "$NVCC" -std=c++17 -arch=sm_90 -o helpers helpers.cu 2>helpers.log && ./helpers >helpers.out 2>&1; then
		[ "$(cat helpers.out)" = "4 -3 -3 4 2 -3 -1 1 -3 2 -5 | 0 1 1 1" ] && ok "C helpers: kforge's integer semantics" ||
			bad "C helpers printed: $(cat helpers.out)"
	else
		bad "helpers.cu: $(head -c 600 helpers.log)"
	fi
fi

# ---- torch ----
expect_exit 0 "export --torch vector_add_f32" -- "$KFORGE" export "$EX/vector_add_f32/baseline.cu" --task "$EX/vector_add_f32/task.json" --torch -o va.py
[ -s va.py ] && [ -s test_va.py ] && ok "module and test script written" || bad "va.py / test_va.py missing"
expect_exit 0 "export --torch matmul_f32 (default file name)" -- "$KFORGE" export "$EX/matmul_f32/reference.cu" --task "$EX/matmul_f32/task.json" --torch
[ -s matmul_f32.py ] && [ -s test_matmul_f32.py ] && ok "./matmul_f32.py and ./test_matmul_f32.py" || bad "default names missing"
expect_exit 0 "export --torch softmax_rows_f32" -- "$KFORGE" export "$EX/softmax_rows_f32/baseline.cu" --task "$EX/softmax_rows_f32/task.json" --torch -o sm.py
expect_exit 0 "export --torch gemm_bias_layernorm_f32 --name gbl" -- "$KFORGE" export "$GBL/reference.cu" --task "$GBL/task.json" --torch --name gbl -o gbl.py
if ! command -v python3 >/dev/null; then
	skip "python3 not installed"
else
	for f in va.py test_va.py matmul_f32.py test_matmul_f32.py sm.py test_sm.py gbl.py test_gbl.py; do
		python3 -m py_compile "$f" 2>"$f.log" && ok "py_compile $f" || bad "py_compile $f: $(cat "$f.log")"
	done
	PYTHONPATH=$TOP/tests/data/export/fake_torch:$TMP python3 - >py.out 2>&1 <<'EOF'
import torch, torch.utils.cpp_extension as ce
import va, matmul_f32, gbl
fails = []
def check(what, cond):
    if not cond:
        fails.append(what)
def raises(what, exc, words, f, *a, **k):
    try:
        f(*a, **k)
    except exc as e:
        check(f"{what}: message {e!s} lacks {words!r}", words in str(e))
        return
    except Exception as e:
        fails.append(f"{what}: raised {type(e).__name__}: {e}")
        return
    fails.append(f"{what}: no {exc.__name__}")

T = torch.Tensor
a, b = T((1000,), torch.float32), T((1000,), torch.float32)
c = va.vector_add_f32(a, b)
check("c is allocated [1000] f32 on a's device", c.shape == (1000,) and c.dtype is torch.float32 and c.device == a.device)
tens, dims, fp, ip = ce.launches[-1]
check("launch gets a, b, c and N", tens[0] is a and tens[1] is b and tens[2] is c and dims == [1000] and fp == [] and ip == [])
va.vector_add_f32(a, b)
check("built once", len(ce.builds) == 1)
bk = ce.builds[0]
check("load_inline: name, functions, flags", bk["name"].startswith("kforge_vector_add_f32_") and bk["functions"] == ["launch"]
      and "-U__CUDA_NO_HALF_OPERATORS__" in bk["extra_cuda_cflags"])
src = bk["cuda_sources"][0]
check("the CUDA source has the kernel and the launcher", "vector_add_v4" in src and "cudaLaunchKernel" in src and "at::cuda::getCurrentCUDAStream()" in src)
raises("a shorter b", ValueError, "b.shape[0] is 999", va.vector_add_f32, a, T((999,), torch.float32))
raises("f64 input", TypeError, "must be torch.float32", va.vector_add_f32, a, T((1000,), torch.float64))
raises("a CPU tensor", ValueError, "must be a CUDA tensor", va.vector_add_f32, a, T((1000,), torch.float32, torch.device("cpu")))
raises("rank 2", ValueError, "must have 1 dimensions", va.vector_add_f32, a, T((10, 100), torch.float32))
raises("N= that disagrees", ValueError, "N = 5 elsewhere", va.vector_add_f32, a, b, N=5)
raises("not a tensor", TypeError, "must be a torch.Tensor", va.vector_add_f32, a, [1.0] * 1000)
raises("another device", ValueError, "not on cuda:0", va.vector_add_f32, a, T((1000,), torch.float32, torch.device("cuda", 1)))

A, B = T((3, 5), torch.float32), T((5, 7), torch.float32)
C = matmul_f32.matmul_f32(A, B)
check("C is [M, N]", C.shape == (3, 7))
check("dims in task order M, N, K", ce.launches[-1][1] == [3, 7, 5])
raises("K mismatch", ValueError, "dim K", matmul_f32.matmul_f32, A, T((6, 7), torch.float32))

x, w = T((4, 9), torch.float32), T((6, 9), torch.float32)
bias, g, be = T((6,), torch.float32), T((6,), torch.float32), T((6,), torch.float32)
y = gbl.gbl(x, w, bias, g, be)
check("y is [M, N]", y.shape == (4, 6))
check("eps defaults to the task's value", abs(ce.launches[-1][2][0] - 1e-05) < 1e-12)
gbl.gbl(x, w, bias, g, be, eps=0.5)
check("eps can be given", ce.launches[-1][2] == [0.5])

# the launch directives' arithmetic, as in core/expr.c
check("python cdiv/div/mod", [va._e_cdiv(7, 2), va._e_cdiv(-7, 2), va._e_cdiv(7, -2), va._e_cdiv(-7, -2),
      va._e_div(-7, 2), va._e_mod(-7, 2), va._e_mod(7, -2)] == [4, -3, -3, 4, -3, -1, 1])
raises("overflow", ValueError, "overflows", va._e_mul, 1 << 62, 4)
raises("zero divisor", ValueError, "division by zero", va._e_cdiv, 1, 0)
print("\n".join(fails) if fails else "python ok")
EOF
	[ "$(cat py.out)" = "python ok" ] && ok "the modules against a stand-in torch: checks, dims, outputs, launch arguments" ||
		bad "python: $(cat py.out)"
	PYTHONPATH=$TOP/tests/data/export/fake_torch python3 test_va.py >tv.out 2>&1
	rc=$?
	[ $rc -eq 2 ] && grep -q "no CUDA GPU" tv.out && ok "the test script exits 2 without a GPU" || bad "test_va.py: exit $rc: $(cat tv.out)"
fi

# ---- errors ----
expect_exit 2 "neither --header nor --torch" -- "$KFORGE" export "$EX/vector_add_f32/reference.cu" --task "$EX/vector_add_f32/task.json"
expect_exit 2 "both --header and --torch" -- "$KFORGE" export "$EX/vector_add_f32/reference.cu" --task "$EX/vector_add_f32/task.json" --header --torch
expect_exit 2 "no --task for a file" -- "$KFORGE" export "$EX/vector_add_f32/reference.cu" --header
expect_exit 2 "a missing kernel file" -- "$KFORGE" export "$TMP/nope.cu" --task "$EX/vector_add_f32/task.json" --header
expect_exit 2 "a kernel for another task" -- "$KFORGE" export "$EX/matmul_f32/reference.cu" --task "$EX/vector_add_f32/task.json" --header
grep -q "reference.cu:" <<<"$ERR_TXT" && ok "the error names the kernel file's line" || bad "error: $ERR_TXT"
expect_exit 2 "--name that is not an identifier" -- "$KFORGE" export "$EX/vector_add_f32/reference.cu" --task "$EX/vector_add_f32/task.json" --header --name 'a;b'
expect_exit 2 "-o that is not a module name" -- "$KFORGE" export "$EX/vector_add_f32/reference.cu" --task "$EX/vector_add_f32/task.json" --torch -o my-mod.py
# an expression that overflows at a public shape is refused by the planner's own checks
printf '%s\n' '// kforge:launch vector_add grid=(N*N*N*N*N) block=(256) args=(a, b, c, N)' \
	'extern "C" __global__ void vector_add(const float *a, const float *b, float *c, int N) {}' >ovf.cu
expect_exit 2 "a grid that overflows at a public shape" -- "$KFORGE" export ovf.cu --task "$EX/vector_add_f32/task.json" --header -o ovf.h
[ ! -e ovf.h ] && ok "nothing written for a refused export" || bad "ovf.h was written"

# ---- from the knowledge base ----
sed "s#\"task_path\":\"[^\"]*\"#\"task_path\":\"$EX/vector_add_f32/task.json\"#" "$TOP/tests/data/demo/vector_add_f32.jsonl" >run.jsonl
sed "s#\"task_path\":\"[^\"]*\"#\"task_path\":\"$TMP/gone/task.json\"#" "$TOP/tests/data/demo/vector_add_f32.jsonl" >gone.jsonl
"$KFORGE" kb import --db kb.db run.jsonl >/dev/null 2>&1 && "$KFORGE" kb import --db gone.db gone.jsonl >/dev/null 2>&1 ||
	bad "kb import of the demo run failed"
expect_exit 0 "export run:1 (the run's best; task from the run's record)" -- "$KFORGE" export run:1 --db kb.db --header -o best.h
grep -q "Kernel: candidate [0-9]* (run 1's best verified" best.h && ok "the header names the candidate" || bad "best.h: $(head -3 best.h)"
grep -q "recorded by run 1" <<<"$ERR_TXT" && ok "the task recorded by the run is said" || bad "stderr: $ERR_TXT"
expect_exit 0 "export cand:3 --torch --json" -- "$KFORGE" export cand:3 --db kb.db --task "$EX/vector_add_f32/task.json" --torch -o c3.py --json
python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["kind"]=="torch" and d["files"]==["c3.py","test_c3.py"], d' "$OUT_TXT" 2>/dev/null &&
	ok "--json lists the files" || bad "--json: $OUT_TXT"
expect_exit 2 "cand:2 failed verification (out_of_bounds)" -- "$KFORGE" export cand:2 --db kb.db --task "$EX/vector_add_f32/task.json" --header
grep -q "out_of_bounds" <<<"$ERR_TXT" && ok "the refusal names the verdict" || bad "error: $ERR_TXT"
expect_exit 2 "run:99 does not exist" -- "$KFORGE" export run:99 --db kb.db --header
expect_exit 2 "cand:x is not an id" -- "$KFORGE" export cand:x --db kb.db --header
expect_exit 2 "the run's task file is gone and no --task" -- "$KFORGE" export run:1 --db gone.db --header
grep -q "gone/task.json" <<<"$ERR_TXT" && ok "the error names the missing task file" || bad "error: $ERR_TXT"
mkdir -p changed && cp "$EX/vector_add_f32/"* changed/ && sed -i 's/"level": 1/"level": 2/' changed/task.json
expect_exit 0 "a task file that changed since the run" -- "$KFORGE" export run:1 --db kb.db --task changed/task.json --header -o ch.h
grep -q "differs from the task file run 1 used" <<<"$ERR_TXT" && ok "warned that the task changed" || bad "stderr: $ERR_TXT"
expect_exit 2 "a missing database" -- "$KFORGE" export run:1 --db nope.db --header
finish
