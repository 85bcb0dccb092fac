/* bootstrap.h - the Python side of installing the hooks: a few lines run
 * once in their own namespace.  The hooks themselves are C functions
 * (hooks.c); this only registers them and knows how to undo that.
 *
 * _nanprof_ready(): torch (with torch.nn and torch.optim) is imported
 * and not half-initialised.
 * _nanprof_install(fwd, walk, opt_pre, opt_post, opt_post_wrapped,
 * counters): registers the global forward hook, sends the counters at exit, wraps torch.autograd.backward and
 * .grad so each graph is walked first, and hooks optimizer steps: with
 * torch's global optimizer hooks (2.0+) or, on older torch, by wrapping
 * step() of every Optimizer subclass.  Returns (uninstall, version), or
 * (None, reason).  uninstall() puts back only what is still ours: a
 * wrapper someone else wrapped again is left in place and does nothing
 * once the agent is disabled. */
#ifndef NP_BOOTSTRAP_H
#define NP_BOOTSTRAP_H

static const char np_bootstrap_py[] =
"def _nanprof_ready():\n"
"    import sys\n"
"    t = sys.modules.get('torch')\n"
"    spec = getattr(t, '__spec__', None)\n"
"    if t is None or spec is None or getattr(spec, '_initializing', False):\n"
"        return False\n"
"    return 'torch.optim' in sys.modules and 'torch.nn' in sys.modules\n"
"\n"
"def _nanprof_install(fwd, walk, opt_pre, opt_post, opt_post_wrapped, counters):\n"
"    undo = []\n"
"    try:\n"
"        import functools, torch, torch.autograd as A\n"
"        import torch.nn.modules.module as M, torch.optim.optimizer as O\n"
"        undo.append(M.register_module_forward_hook(fwd).remove)\n"
"        import atexit\n"
"        atexit.register(counters)\n"
"        undo.append(lambda: atexit.unregister(counters))\n"
"        def wrap_autograd(name, roots):\n"
"            orig = getattr(A, name)\n"
"            @functools.wraps(orig)\n"
"            def f(*a, **k):\n"
"                walk(a[0] if a else k.get(roots))\n"
"                return orig(*a, **k)\n"
"            setattr(A, name, f)\n"
"            def restore():\n"
"                if getattr(A, name) is f:\n"
"                    setattr(A, name, orig)\n"
"            undo.append(restore)\n"
"        wrap_autograd('backward', 'tensors')\n"
"        wrap_autograd('grad', 'outputs')\n"
"        if hasattr(O, 'register_optimizer_step_pre_hook'):\n"
"            undo.append(O.register_optimizer_step_pre_hook(opt_pre).remove)\n"
"            undo.append(O.register_optimizer_step_post_hook(opt_post).remove)\n"
"        else:\n"
"            seen, todo = set(), [O.Optimizer]\n"
"            while todo:\n"
"                c = todo.pop()\n"
"                if c in seen:\n"
"                    continue\n"
"                seen.add(c)\n"
"                todo.extend(c.__subclasses__())\n"
"                orig = c.__dict__.get('step')\n"
"                if orig is None or c is O.Optimizer:\n"
"                    continue\n"
"                def make(orig):\n"
"                    @functools.wraps(orig)\n"
"                    def step(self, *a, **k):\n"
"                        opt_pre(self, a, k)\n"
"                        out = orig(self, *a, **k)\n"
"                        opt_post_wrapped(self, a, k)\n"
"                        return out\n"
"                    return step\n"
"                s = make(orig)\n"
"                setattr(c, 'step', s)\n"
"                def restore(c=c, s=s, orig=orig):\n"
"                    if c.__dict__.get('step') is s:\n"
"                        setattr(c, 'step', orig)\n"
"                undo.append(restore)\n"
"        def uninstall():\n"
"            for u in reversed(undo):\n"
"                try:\n"
"                    u()\n"
"                except Exception:\n"
"                    pass\n"
"        return uninstall, str(torch.__version__)\n"
"    except Exception as e:\n"
"        for u in reversed(undo):\n"
"            try:\n"
"                u()\n"
"            except Exception:\n"
"                pass\n"
"        return None, (type(e).__name__ + ': ' + str(e))[:31]\n";

#endif
