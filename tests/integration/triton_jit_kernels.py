"""User @triton.jit kernels as real jobs write them, for
triton_jit_check.py: what agent/triton_jit.py must read from each one's
source.  WRITES maps each kernel to its parameters' roles as a reader of
the source sees them: 1 written, 2 written over its own old values (read
too, or an atomic), 0 read; None for a kernel whose writes cannot be
followed.  The parameters listed are those given tensors at launch
(GIVEN for the others).  Needs triton (no GPU).
"""
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    # Triton's tutorial 01
    pid = tl.program_id(axis=0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


@triton.jit
def rms_norm_fwd(Y_ptr, Y_row_stride, X_ptr, X_row_stride, W_ptr, W_row_stride,
                 RSTD_ptr, RSTD_row_stride, n_cols, eps, BLOCK_SIZE: tl.constexpr):
    # as Liger's RMSNorm forward: one program per row, pointers moved in place
    row_idx = tl.program_id(0)
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols
    Y_ptr += row_idx * Y_row_stride
    X_ptr += row_idx * X_row_stride
    RSTD_ptr += row_idx * RSTD_row_stride
    X_row = tl.load(X_ptr + col_offsets, mask=mask, other=0)
    W_row = tl.load(W_ptr + col_offsets, mask=mask, other=0)
    mean_square = tl.sum(X_row * X_row, axis=0) / n_cols
    rstd = tl.math.rsqrt(mean_square + eps)
    tl.store(RSTD_ptr, rstd)
    tl.store(Y_ptr + col_offsets, X_row * rstd * W_row, mask=mask)


@triton.jit
def softmax_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, n_rows, n_cols,
                   BLOCK_SIZE: tl.constexpr, num_stages: tl.constexpr):
    # Triton's tutorial 02: a row pointer, then a range of pointers from it
    row_start = tl.program_id(0)
    row_step = tl.num_programs(0)
    for row_idx in tl.range(row_start, n_rows, row_step, num_stages=num_stages):
        row_start_ptr = input_ptr + row_idx * input_row_stride
        col_offsets = tl.arange(0, BLOCK_SIZE)
        input_ptrs = row_start_ptr + col_offsets
        row = tl.load(input_ptrs, mask=col_offsets < n_cols, other=-float('inf'))
        row_minus_max = row - tl.max(row, axis=0)
        numerator = tl.exp(row_minus_max)
        softmax_output = numerator / tl.sum(numerator, axis=0)
        output_row_start_ptr = output_ptr + row_idx * output_row_stride
        output_ptrs = output_row_start_ptr + col_offsets
        tl.store(output_ptrs, softmax_output, mask=col_offsets < n_cols)


@triton.jit
def matmul_block_ptr(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                     stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                     BLOCK_K: tl.constexpr):
    # block pointers, advanced in the loop that carries them
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    a_block = tl.make_block_ptr(base=a_ptr, shape=(M, K), strides=(stride_am, stride_ak),
                                offsets=(pid_m * BLOCK_M, 0), block_shape=(BLOCK_M, BLOCK_K),
                                order=(1, 0))
    b_block = tl.make_block_ptr(b_ptr, (K, N), (stride_bk, stride_bn), (0, pid_n * BLOCK_N),
                                (BLOCK_K, BLOCK_N), (1, 0))
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_block, boundary_check=(0, 1))
        b = tl.load(b_block, boundary_check=(0, 1))
        acc += tl.dot(a, b)
        a_block = tl.advance(a_block, (0, BLOCK_K))
        b_block = tl.advance(b_block, (BLOCK_K, 0))
    c_block = tl.make_block_ptr(base=c_ptr, shape=(M, N), strides=(stride_cm, stride_cn),
                                offsets=(pid_m * BLOCK_M, pid_n * BLOCK_N),
                                block_shape=(BLOCK_M, BLOCK_N), order=(1, 0))
    tl.store(c_block, acc.to(tl.float16), boundary_check=(0, 1))


@triton.jit
def gather_rows(out_ptr, src_ptr, idx_ptr, n_cols, BLOCK: tl.constexpr):
    # an index loaded from idx_ptr addresses the load: idx_ptr is read only
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    src_row = tl.load(idx_ptr + row)
    v = tl.load(src_ptr + src_row * n_cols + cols, mask=cols < n_cols)
    tl.store(out_ptr + row * n_cols + cols, v, mask=cols < n_cols)


@triton.jit
def scatter_add(acc_ptr, val_ptr, idx_ptr, n, BLOCK: tl.constexpr):
    # an atomic accumulates into acc_ptr: its old values are read too;
    # the index it stores through is data, not a pointer
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    i = tl.load(idx_ptr + offs, mask=m)
    tl.atomic_add(acc_ptr + i, tl.load(val_ptr + offs, mask=m), mask=m)


@triton.jit
def scale_(x_ptr, n, s, BLOCK: tl.constexpr):
    # in place: loads and stores the same tensor
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(x_ptr + offs, x * s, mask=offs < n)


@triton.jit
def _row_ptr(base, row, stride):
    return base + row * stride


@triton.jit
def _store_row(p, v, mask):
    tl.store(p, v, mask=mask)


@triton.jit
def swiglu_fwd(a_ptr, b_ptr, c_ptr, stride, n_cols, BLOCK: tl.constexpr):
    # as Liger's SwiGLU, through helpers: one returns a pointer, one stores
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    a = tl.load(_row_ptr(a_ptr, row, stride) + cols, mask=mask).to(tl.float32)
    b = tl.load(_row_ptr(b_ptr, row, stride) + cols, mask=mask)
    c = a * tl.sigmoid(a) * b
    _store_row(_row_ptr(c_ptr, row, stride) + cols, c, mask)


@triton.jit
def cross_entropy_fwd(logits_ptr, loss_ptr, target_ptr, stride, n_cols, ignore_index,
                      BLOCK: tl.constexpr):
    # a loss kernel that writes its gradient over the logits in place
    row = tl.program_id(0).to(tl.int64)
    logits_ptr += row * stride
    y = tl.load(target_ptr + row)
    cols = tl.arange(0, BLOCK)
    x = tl.load(logits_ptr + cols, mask=cols < n_cols, other=-float('inf')).to(tl.float32)
    m = tl.max(x, 0)
    d = tl.sum(tl.exp(x - m), 0)
    lse = m + tl.log(d)
    x_y = tl.load(logits_ptr + y)
    tl.store(loss_ptr + row, tl.where(y == ignore_index, 0.0, lse - x_y))
    tl.store(logits_ptr + cols, tl.exp(x - m) / d, mask=cols < n_cols)


@triton.jit
def kv_cache_append(cache_ptr, new_ptr, pos, stride_b, stride_l, D: tl.constexpr):
    # writes one position of a cache per program: the rest is not its
    b = tl.program_id(0)
    d = tl.arange(0, D)
    v = tl.load(new_ptr + b * D + d)
    tl.store(cache_ptr + b * stride_b + pos * stride_l + d, v)


@triton.jit
def asm_pointers(out_ptr, x_ptr, n, BLOCK: tl.constexpr):
    # pointers handed to inline assembly, which may store through them:
    # not followed, so the kernel is not known
    offs = tl.arange(0, BLOCK)
    p = tl.inline_asm_elementwise("mov.b64 $0, $1;", "=l,l", [out_ptr + offs],
                                  dtype=tl.pointer_type(tl.float32), is_pure=True, pack=1)
    tl.store(p, tl.load(x_ptr + offs), mask=offs < n)


@triton.jit
def copy_tma(in_desc, out_desc, amax_ptr, BLOCK: tl.constexpr):
    # host TensorDescriptors (TMA): loads and stores through their
    # methods; each block's largest magnitude too (an fp8 cast's amax)
    pid = tl.program_id(0)
    v = in_desc.load([pid * BLOCK, 0])
    out_desc.store([pid * BLOCK, 0], v)
    tl.store(amax_ptr + pid, tl.max(tl.max(tl.abs(v), 1), 0))


@triton.jit
def pair_store(ptrs, norm_ptr, n, BLOCK: tl.constexpr):
    # tensors in a tuple argument (Triton 3.3+): the first store's target
    # is a tuple's element, not a parameter followed
    offs = tl.arange(0, BLOCK)
    x = tl.load(ptrs[0] + offs, mask=offs < n, other=0.0)
    tl.store(ptrs[1] + offs, x, mask=offs < n)
    tl.store(norm_ptr, tl.sum(x * x, 0))


@triton.jit
def loss_maybe_z(x_ptr, loss_ptr, z_ptr, n, HAS_Z: tl.constexpr, BLOCK: tl.constexpr):
    # an optional output: None when its flag is off, as Liger's
    # cross entropy passes z_loss
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(loss_ptr, tl.sum(x, 0))
    if HAS_Z:
        tl.store(z_ptr, tl.sum(x * x, 0))


@triton.jit
def mid_constexpr(x_ptr, SCALE: tl.constexpr, y_ptr, n, BLOCK: tl.constexpr):
    # a constexpr between pointers: where a compiled graph's call puts
    # the arguments depends on whether it passes constexprs
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * SCALE, mask=offs < n)


def _timed(kernel_call, quantiles):
    # autotuning's benchmark without a GPU: one call, made-up times
    kernel_call()
    return [1.0, 1.0, 1.0]


@triton.autotune(configs=[triton.Config({"BLOCK_SIZE": 64}), triton.Config({"BLOCK_SIZE": 128})],
                 key=["n_elements"], do_bench=_timed)
@triton.jit
def add_tuned(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    # autotuned: triton.autotune's run() launches it through JITFunction.run
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * tl.load(y_ptr + offs, mask=mask),
             mask=mask)


# the parameters given tensors, for the kernels not known
GIVEN = {"asm_pointers": ("out_ptr", "x_ptr"), "pair_store": ("norm_ptr",)}

WRITES = {
    add_kernel: {"x_ptr": 0, "y_ptr": 0, "out_ptr": 1},
    rms_norm_fwd: {"Y_ptr": 1, "X_ptr": 0, "W_ptr": 0, "RSTD_ptr": 1},
    softmax_kernel: {"output_ptr": 1, "input_ptr": 0},
    matmul_block_ptr: {"a_ptr": 0, "b_ptr": 0, "c_ptr": 1},
    gather_rows: {"out_ptr": 1, "src_ptr": 0, "idx_ptr": 0},
    scatter_add: {"acc_ptr": 2, "val_ptr": 0, "idx_ptr": 0},
    scale_: {"x_ptr": 2},
    swiglu_fwd: {"a_ptr": 0, "b_ptr": 0, "c_ptr": 1},
    cross_entropy_fwd: {"logits_ptr": 2, "loss_ptr": 1, "target_ptr": 0},
    kv_cache_append: {"cache_ptr": 1, "new_ptr": 0},
    asm_pointers: None,
    add_tuned.fn: {"x_ptr": 0, "y_ptr": 0, "out_ptr": 1},
    copy_tma: {"in_desc": 0, "out_desc": 1, "amax_ptr": 1},
    pair_store: None,
    loss_maybe_z: {"x_ptr": 0, "loss_ptr": 1, "z_ptr": 1},
    mid_constexpr: {"x_ptr": 0, "y_ptr": 1},
}
