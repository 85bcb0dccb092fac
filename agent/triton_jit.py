# triton_jit.py - what a user's own @triton.jit kernel writes (Liger's,
# Unsloth's, a Triton flash attention's), read from its source, and the
# wrapper of JITFunction.run that hands it to the agent before each launch.
#
# Embedded in the agent (the Makefile turns this file into a C string,
# agent/triton_jit_py.h) and run in the bootstrap's namespace
# (agent/bootstrap.h) after it: TRITON holds the agent's plan and done
# calls (cupti/triton.h).  It is plain Python so that it can be tested as
# it is (tests/integration/test_triton_jit.sh, triton_jit_check.py).
#
# A Triton kernel's launch passes bare pointers: which of them it writes
# is in its source only.  Inductor's kernels say it in their argument
# names (bootstrap.h); a user's kernel says it in its tl.store calls.
# jit_spec() follows each pointer parameter through the kernel's
# assignments (ptrs = out_ptr + offs; p = tl.make_block_ptr(base=c_ptr,
# ...); tl.advance(p, ...)) into the pointer argument of tl.store and the
# atomics (written) and tl.load (read), into @triton.jit helpers it calls
# (followed the same way), and through nothing else: a value loaded from
# a pointer is data, so an index loaded from idx_ptr does not make
# idx_ptr written when it addresses a store.  A pointer handed to
# anything it cannot follow (inline assembly, a call it does not know),
# or a store through anything not followed (a tensor in a tuple), makes
# the kernel unknown: no plan, and its launches stay with the generic
# tier as before.  The parameters followed are those a launch gives a
# tensor, a host TensorDescriptor (its base tensor) or None (a null
# pointer: an optional output its constexpr flag skips).
#
# A written tensor is taken only when dense and when the launch shows it
# covers the whole of it (jit_whole): its element count is one of the
# launch's sizes (an integer argument not named as a stride, a grid
# dimension) or a product of two or three of them (n_rows * n_cols with
# one program per row: grid[0] * n_cols).  A kernel writing part of a
# tensor (a KV cache's new position) leaves the unwritten rest unread:
# were it checked, whatever lay there would look born in this kernel.  A
# kernel with one written tensor not shown whole gets no plan at all, for
# the same reason: a plan's launch is not handed to the generic tier.
# The sizes can meet a partial write's element count by chance (a grid of
# B programs, a row length L * D passed as an integer); such a check reads
# the unwritten rest too.

import ast
import builtins

JIT_MODULE = 'triton.runtime.jit'

# triton.language calls whose result is a pointer built from some of their
# arguments: positions, and the keyword of the first
JIT_POINTER_CALLS = {
    'make_block_ptr': ((0,), 'base'), 'make_tensor_descriptor': ((0,), 'base'),
    'advance': ((0,), 'base'), 'multiple_of': ((0,), 'input'),
    'max_contiguous': ((0,), 'input'), 'max_constancy': ((0,), 'input'),
    'broadcast_to': ((0,), 'input'), 'broadcast': ((0, 1), 'input'),
    'reshape': ((0,), 'input'), 'view': ((0,), 'input'), 'expand_dims': ((0,), 'input'),
    'permute': ((0,), 'input'), 'trans': ((0,), 'input'), 'where': ((1, 2), 'x'),
    'cast': ((0,), 'input'), 'to': ((), None), 'split': ((0,), 'a'),
}
JIT_STORES = ('store',)
JIT_LOADS = ('load',)
JIT_ATOMICS = ('atomic_add', 'atomic_max', 'atomic_min', 'atomic_and', 'atomic_or',
               'atomic_xor', 'atomic_xchg', 'atomic_cas')
JIT_KNOWN = JIT_STORES + JIT_LOADS + JIT_ATOMICS + tuple(JIT_POINTER_CALLS)
# triton.language calls a pointer may be handed without being written
JIT_INERT = ('device_print', 'static_print', 'device_assert', 'static_assert')
JIT_HELPER_DEPTH = 4   # @triton.jit helpers followed this deep

# torch dtypes the check kernels read, as Triton names their pointers
JIT_DTYPES = {'float32': '*fp32', 'float16': '*fp16', 'bfloat16': '*bf16',
              'float64': '*fp64', 'float8_e4m3fn': '*fp8e4nv', 'float8_e5m2': '*fp8e5'}


class JitUnknown(Exception):
    """The kernel hands a pointer to something not followed."""


class JitFlow:
    # One function's pointer flow: which of its parameters reach a store,
    # a load, its return value.
    def __init__(self, fn, globs, depth, pointers):
        self.globs = globs
        self.depth = depth
        self.params = [a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs]
        # only parameters given a tensor carry a pointer; an integer (a
        # stride) added to one is an offset
        self.deps = {p: frozenset((p,)) if pointers is None or p in pointers else frozenset()
                     for p in self.params}
        self.stored, self.loaded, self.returned = set(), set(), set()
        self.fn = fn

    def run(self):
        # deps only grow: a few passes reach a loop's carried pointers
        for _ in range(8):
            before = dict(self.deps)
            for s in self.fn.body:
                self.stmt(s)
            if before == self.deps:
                return self
        raise JitUnknown('no fixed point')

    def assign(self, target, d):
        if isinstance(target, ast.Name):
            self.deps[target.id] = self.deps.get(target.id, frozenset()) | d
        elif isinstance(target, (ast.Tuple, ast.List)):
            for t in target.elts:
                self.assign(t, d)
        elif isinstance(target, ast.Starred):
            self.assign(target.value, d)
        elif d:
            raise JitUnknown('a pointer stored into ' + type(target).__name__)

    def stmt(self, s):
        if isinstance(s, ast.Assign):
            if (len(s.targets) == 1 and isinstance(s.targets[0], ast.Tuple) and
                    isinstance(s.value, ast.Tuple) and
                    len(s.targets[0].elts) == len(s.value.elts)):
                for t, v in zip(s.targets[0].elts, s.value.elts):
                    self.assign(t, self.ptr(v))
                return
            d = self.ptr(s.value)
            for t in s.targets:
                self.assign(t, d)
        elif isinstance(s, ast.AugAssign):
            self.assign(s.target, self.ptr(s.value) | self.ptr(s.target))
        elif isinstance(s, ast.AnnAssign):
            if s.value is not None:
                self.assign(s.target, self.ptr(s.value))
        elif isinstance(s, ast.Return):
            if s.value is not None:
                self.returned |= self.ptr(s.value)
        elif isinstance(s, (ast.For, ast.AsyncFor)):
            self.assign(s.target, self.ptr(s.iter))
            for b in s.body + s.orelse:
                self.stmt(b)
        elif isinstance(s, (ast.If, ast.While)):
            self.ptr(s.test)
            for b in s.body + s.orelse:
                self.stmt(b)
        elif isinstance(s, ast.With):
            for item in s.items:
                self.ptr(item.context_expr)
            for b in s.body:
                self.stmt(b)
        elif isinstance(s, ast.Expr):
            self.ptr(s.value)
        elif isinstance(s, (ast.Assert,)):
            self.ptr(s.test)
        elif isinstance(s, (ast.Pass, ast.Break, ast.Continue)):
            pass
        else:
            # anything else holding a pointer is not followed
            for n in ast.walk(s):
                if isinstance(n, ast.Name) and self.deps.get(n.id):
                    raise JitUnknown(type(s).__name__)

    def ptr(self, e):
        # the parameters whose pointers e may hold; records what the calls
        # in it store and load
        if e is None:
            return frozenset()
        if isinstance(e, ast.Name):
            return self.deps.get(e.id, frozenset())
        if isinstance(e, ast.BinOp):
            return self.ptr(e.left) | self.ptr(e.right)
        if isinstance(e, ast.UnaryOp):
            return self.ptr(e.operand)
        if isinstance(e, ast.Subscript):
            self.ptr(e.slice)
            return self.ptr(e.value)
        if isinstance(e, ast.IfExp):
            self.ptr(e.test)
            return self.ptr(e.body) | self.ptr(e.orelse)
        if isinstance(e, (ast.Tuple, ast.List)):
            d = frozenset()
            for x in e.elts:
                d |= self.ptr(x)
            return d
        if isinstance(e, ast.Call):
            return self.call(e)
        if isinstance(e, ast.Attribute):
            self.ptr(e.value)   # x.dtype, x.shape: data, not a pointer
            return frozenset()
        for c in ast.iter_child_nodes(e):   # comparisons, boolean ops: data
            if isinstance(c, ast.expr):
                self.ptr(c)
        return frozenset()

    def resolve(self, f):
        # the object a called name or dotted name stands for, or None
        if isinstance(f, ast.Name):
            return self.globs.get(f.id, getattr(builtins, f.id, None))
        if isinstance(f, ast.Attribute):
            o = self.resolve(f.value)
            return getattr(o, f.attr, None) if o is not None else None
        return None

    def call(self, e):
        args = [self.ptr(a) for a in e.args]
        kw = {k.arg: self.ptr(k.value) for k in e.keywords}
        f = e.func
        on = frozenset()
        if isinstance(f, ast.Attribute):
            on = self.ptr(f.value)
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ''

        def first(key='pointer'):
            return args[0] if args else kw.get(key, frozenset())
        if on:   # a method of a pointer or descriptor: p.to(...), desc.store(...)
            if name in JIT_STORES + JIT_ATOMICS:
                self.stored |= on
                if name in JIT_ATOMICS:
                    self.loaded |= on
                return frozenset()
            if name in JIT_LOADS:
                self.loaded |= on
                return frozenset()
            if name in JIT_POINTER_CALLS:
                return on
            raise JitUnknown('pointer method ' + name)
        if (isinstance(f, ast.Attribute) and name in JIT_STORES + JIT_ATOMICS and
                self.resolve(f.value) is None):
            # a store through a local or a parameter not followed (a host
            # TensorDescriptor not taken for one, an alias of tl unknown)
            raise JitUnknown('a store through ' + ast.dump(f.value)[:40])
        obj = self.resolve(f)
        helper = obj if hasattr(obj, 'src') and hasattr(obj, 'arg_names') else None
        if helper is None and obj is not None and getattr(obj, 'fn', None) is not None \
                and hasattr(getattr(obj, 'fn'), 'src'):
            helper = obj.fn   # a helper wrapped again (autotune, heuristics)
        mod = getattr(obj, '__module__', '') or ''
        if helper is not None and not mod.startswith('triton.language'):
            return self.helper(helper, args, kw)   # not tl.sum, tl.sort: @jit too
        # triton.language's, or a call of that name through a module not
        # resolved (a local alias)
        tl = mod.startswith('triton.language') or (
            obj is None and isinstance(f, ast.Attribute) and name in JIT_KNOWN)
        if tl and name in JIT_STORES + JIT_ATOMICS:
            p = first()
            if not p:   # through no parameter followed (a tuple's tensor)
                raise JitUnknown('a store through nothing followed')
            self.stored |= p
            if name in JIT_ATOMICS:
                self.loaded |= p
            return frozenset()
        if tl and name in JIT_LOADS:
            self.loaded |= first()
            return frozenset()
        if tl and name in JIT_POINTER_CALLS:
            pos, key = JIT_POINTER_CALLS[name]
            d = kw.get(key, frozenset()) if key else frozenset()
            for i in pos:
                if i < len(args):
                    d |= args[i]
            return d
        carried = frozenset().union(*args, *kw.values())
        if not carried or (mod.startswith('triton') and name in JIT_INERT):
            return frozenset()   # a call on data (tl.exp, tl.sum, min), a print
        raise JitUnknown('a pointer handed to ' + (name or '?'))

    def helper(self, jit, args, kw):
        if self.depth >= JIT_HELPER_DEPTH:
            raise JitUnknown('helpers too deep')
        # a helper's parameters carry whatever their arguments carry
        params = jit_params(jit)
        given = set(params[i] for i, d in enumerate(args) if i < len(params) and d)
        given |= set(k for k, d in kw.items() if d)
        flow = jit_flow(jit, given, self.depth + 1)
        m = {}
        for i, d in enumerate(args):
            if i < len(flow.params):
                m[flow.params[i]] = d
        for k, d in kw.items():
            m[k] = d
        for p in flow.stored:
            self.stored |= m.get(p, frozenset())
        for p in flow.loaded:
            self.loaded |= m.get(p, frozenset())
        d = frozenset()
        for p in flow.returned:
            d |= m.get(p, frozenset())
        return d


def jit_def(jit):
    # a @triton.jit function's def, parsed from its source (src: Triton
    # keeps it dedented from its def)
    try:
        tree = ast.parse(jit.src)
    except SyntaxError:
        raise JitUnknown('source does not parse')
    fns = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    if not fns:
        raise JitUnknown('no def')
    return fns[0]


def jit_params(jit):
    a = jit_def(jit).args
    return [p.arg for p in a.posonlyargs + a.args + a.kwonlyargs]


def jit_flow(jit, pointers, depth=0):
    # its flow, the parameters in pointers holding pointers; raises JitUnknown
    globs = getattr(jit, '__globals__', None) or getattr(jit.fn, '__globals__', {})
    return JitFlow(jit_def(jit), globs, depth, pointers).run()


def jit_spec(jit, pointers=None):
    # (kernel name, ((argument index, role), ...)) of a JITFunction whose
    # parameters in pointers are given tensors (None: any parameter may
    # be): role 2 written over its own old values (loaded too, an
    # atomic), 1 written, 0 read (cupti/triton.h); None when not known.
    # Constexpr parameters are no tensors and are left out.
    try:
        flow = jit_flow(jit, pointers)
    except Exception:   # JitUnknown, or a Triton this does not know
        return None
    constexpr = set(getattr(jit, 'constexprs', None) or ())
    out = []
    for i, p in enumerate(flow.params):
        if i in constexpr or not (p in flow.stored or p in flow.loaded):
            continue
        role = 2 if p in flow.stored and p in flow.loaded else 1 if p in flow.stored else 0
        out.append((i, role))
    if not any(r for _, r in out):
        return None   # writes through no parameter: nothing to plan
    return (jit.__name__, tuple(out))


def jit_sizes(jit, bound, grid):
    # what a launch's element counts may be made of: integer arguments
    # not named as strides, and the grid
    sizes = []
    for n, v in bound.items():
        if type(v) is int and v > 1 and 'stride' not in n:
            sizes.append(v)
    g = [v for v in grid if type(v) is int and v > 1]
    return sizes + g


def jit_whole(numel, sizes):
    # numel one of the sizes, or a product of two or three of them (or
    # 1: a scalar, a loss, is written whole when written at all)
    s = set(sizes[:16])
    if numel == 1 or numel in s:
        return True
    for a in s:
        if numel % a:
            continue
        r = numel // a
        if r in s:
            return True
        for b in s:
            if r % b == 0 and r // b in s:
                return True
    return False


def jit_bound(jit, a, k):
    # the kernel's arguments by name, with defaults, as Triton binds them
    names = jit.arg_names
    bound = {}
    for i, v in enumerate(a[:len(names)]):
        bound[names[i]] = v
    for n in names[len(bound):]:
        if n in k:
            bound[n] = k[n]
        else:
            p = jit.signature.parameters.get(n)
            if p is not None and p.default is not p.empty:
                bound[n] = p.default
    return bound


def jit_tensor(v):
    # the tensor an argument passes: itself, or a host TensorDescriptor's
    # base (Triton 3.4's TMA); None for anything else
    if hasattr(v, 'data_ptr'):
        return v
    b = getattr(v, 'base', None)
    return b if hasattr(b, 'data_ptr') else None


def jit_plan(jit, spec, bound, k):
    # the flat plan of one launch (triton_plan.c), or None
    grid = k.get('grid')
    if callable(grid):
        grid = grid(dict(bound))
    grid = tuple(grid) if isinstance(grid, (tuple, list)) else (grid,)
    sizes = None
    flat = []
    names = jit.arg_names
    for i, role in spec[1]:
        v = jit_tensor(bound.get(names[i]))
        if v is None:
            continue
        t = JIT_DTYPES.get(str(getattr(v, 'dtype', '')).replace('torch.', ''))
        if t is None or not getattr(v, 'is_cuda', False):
            continue   # integers, bools: never non-finite
        if not v.is_contiguous():
            if role:
                return None   # written, and not checkable whole
            continue
        n = v.numel()
        if role:
            if sizes is None:
                sizes = jit_sizes(jit, bound, grid)
            if not jit_whole(n, sizes):
                return None   # written in part, maybe: the generic tier's
        flat += (role, v.data_ptr(), n, t)
    return tuple(flat) if flat else None


def jit_custom_plan(autotuner, a):
    # (name, flat plan) of a user's kernel in a torch.compile'd graph, or
    # None.  Inductor re-compiles it from its source into a
    # CachingAutotuner (custom_kernel) whose run() gets the kernel's
    # arguments in order, its constexprs left out on newer Triton, then
    # the grid (torch/_inductor/ir.py, UserDefinedTritonKernel._codegen).
    # A layout is taken when its tensors land exactly on parameters the
    # source reads or writes through, its written ones all tensors or
    # None; when both layouts fit they must agree (constexprs last).
    jit = autotuner.fn
    shape = (len(a), tuple(i for i, v in enumerate(a) if v is None or jit_tensor(v) is not None))
    cache = autotuner.__dict__.setdefault('_nanprof_custom', {})
    if shape not in cache and len(cache) < 16:
        cache[shape] = jit_custom_layout(jit, a)
    got = cache.get(shape)
    if not got:
        return None
    layout, spec = got
    bound = dict(zip(layout, a))
    extra = a[len(layout):]
    flat = jit_plan(jit, spec, bound, {'grid': tuple(v for v in extra if type(v) is int)})
    return (spec[0], flat) if flat else None


def jit_custom_layout(jit, a):
    # (parameter names a's values go to, spec), or None (jit_custom_plan)
    names = list(jit.arg_names)
    constexpr = set(getattr(jit, 'constexprs', None) or ())
    found = []
    for layout in ([n for i, n in enumerate(names) if i not in constexpr], names):
        if len(a) < len(layout):
            continue
        b = dict(zip(layout, a))
        tensors = frozenset(n for n, v in b.items() if jit_tensor(v) is not None)
        s = jit_spec(jit, tensors | frozenset(n for n, v in b.items() if v is None))
        used = set(names[i] for i, _ in (s[1] if s else ()))
        if s and tensors <= used:
            found.append((layout, s, {n: id(b[n]) for n in tensors}))
    if not found or any(f[2] != found[0][2] for f in found):
        return None   # none fits, or two fit with tensors placed apart
    return found[0][0], found[0][1]


def wrap_jit(functools, undo):
    # a user's @triton.jit kernels, launched by JITFunction.run (directly,
    # or through triton.autotune and triton.heuristics): before each
    # launch, its tensors and what it does with each.  True once wrapped.
    import sys
    m = sys.modules.get(JIT_MODULE)
    c = getattr(m, 'JITFunction', None)
    orig = c.__dict__.get('run') if isinstance(c, type) else None
    if orig is None or not TRITON:
        return False
    if getattr(orig, '_nanprof', False):
        return True
    plan, done = TRITON

    @functools.wraps(orig)
    def run(self, *a, **k):
        planned = False
        try:
            if not k.get('warmup'):
                bound = jit_bound(self, a, k)
                # parameters holding pointers: tensors, and None (a null
                # pointer, an optional output its constexpr flag skips)
                ptrs = frozenset(n for n, v in bound.items()
                                 if v is None or jit_tensor(v) is not None)
                # read once per kernel and set of tensor arguments (None:
                # not known)
                cache = self.__dict__   # a JITFunction without one: no plan
                got = cache.get('_nanprof_spec')
                if got is None or got[0] != ptrs:
                    got = cache['_nanprof_spec'] = (ptrs, jit_spec(self, ptrs))
                s = got[1]
                flat = jit_plan(self, s, bound, k) if s else None
                if flat:
                    plan(s[0], flat)
                    planned = True
        except Exception:
            pass   # the kernel launches whatever happens here
        if not planned:
            return orig(self, *a, **k)
        try:
            return orig(self, *a, **k)
        finally:
            done()
    run._nanprof = True
    c.run = run

    def restore():
        if c.__dict__.get('run') is run:
            c.run = orig
    undo.append(restore)
    return True
