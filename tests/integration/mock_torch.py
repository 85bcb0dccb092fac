"""A torch-free stand-in for the parts of PyTorch that nanprof's Python
probes read, to check the CPython offsets on interpreters that have no
torch (pyenv's 3.10, 3.12, 3.13 here).

Like torch: nn.Module subclasses are called through __call__ ->
_call_impl (a C-level call, so a new frame), children live in the
instance's _modules dict, a ModuleList-like container is iterated, and
Optimizer.step runs inside a record_function("Optimizer.step#...")
block whose enter and exit are calls of OpOverloadPacket objects, with
the step function itself entered through f(*args, **kwargs).
"""
import sys
import time


class Module:
    def __init__(self):
        self.__dict__["_modules"] = {}

    def __setattr__(self, name, value):
        if isinstance(value, Module):
            self.__dict__["_modules"][name] = value
        self.__dict__[name] = value

    def _call_impl(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    __call__ = _call_impl


class ModuleList(Module):
    def __init__(self, mods):
        super().__init__()
        for i, m in enumerate(mods):
            self._modules[str(i)] = m

    def __iter__(self):
        return iter(self._modules.values())


class Linear(Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        return [v * self.scale for v in x]


class Block(Module):
    def __init__(self):
        super().__init__()
        self.fc = Linear(1.01)
        self.norm = Linear(0.99)

    def forward(self, x):
        return self.norm(self.fc(x))


class Net(Module):
    def __init__(self):
        super().__init__()
        self.inp = Linear(1.0)
        self.layers = ModuleList([Block(), Block()])
        self.head = Linear(0.5)

    def forward(self, x):
        x = self.inp(x)
        for layer in self.layers:
            x = layer(x)
        return self.head(x)


class OpOverloadPacket:
    def __init__(self, fn):
        self.fn = fn

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)


class _Record:
    def __init__(self, name):
        self.name = name


_enter = OpOverloadPacket(lambda name, args=None: _Record(name))
_exit = OpOverloadPacket(lambda record: None)


class record_function:
    def __init__(self, name):
        self.name = name

    def __enter__(self):
        self.record = _enter(self.name, None)
        return self

    def __exit__(self, *exc):
        _exit(self.record)


def _hook_step(func):
    def wrapper(*args, **kwargs):
        self = args[0]
        with record_function("Optimizer.step#%s.step" % type(self).__name__):
            return func(*args, **kwargs)
    return wrapper


class Optimizer:
    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        cls.step = _hook_step(cls.step)


class SGD(Optimizer):
    def step(self):
        return sum(range(100))


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    sleep = float(sys.argv[2]) if len(sys.argv) > 2 else 0.02
    net, opt, x = Net(), SGD(), [1.0] * 8
    for _ in range(steps):
        y = net(x)
        opt.step()
        time.sleep(sleep)
    print("finished %d steps %.6f" % (steps, sum(y)))


main()
