"""torch.optim.LBFGS over ditto's ops: the L-BFGS two-loop recursion with
torch 1.13's conventions (first step min(1, 1/|g|_1) lr, history of
curvature pairs with y.s > 1e-10, H_diag = y.s / y.y, its stopping
tests), in a fixed order of tensor ops. line_search_fn='strong_wolfe' is
not supported yet."""
from .. import _C
from ..grad_mode import enable_grad, no_grad


class LBFGS:
    def __init__(self, params, lr=1, max_iter=20, max_eval=None,
                 tolerance_grad=1e-7, tolerance_change=1e-9,
                 history_size=100, line_search_fn=None):
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        if line_search_fn is not None:
            raise ValueError("[LBFGS] line_search_fn='strong_wolfe' is not "
                             "supported yet: pass line_search_fn=None")
        params = list(params)
        if params and isinstance(params[0], dict):
            if len(params) != 1:
                raise ValueError("LBFGS doesn't support per-parameter options "
                                 "(parameter groups)")
            params = list(params[0]["params"])
        if not params:
            raise ValueError("optimizer got an empty parameter list")
        self.defaults = dict(lr=lr, max_iter=max_iter, max_eval=max_eval,
                             tolerance_grad=tolerance_grad,
                             tolerance_change=tolerance_change,
                             history_size=history_size,
                             line_search_fn=line_search_fn)
        self.param_groups = [dict(self.defaults, params=params)]
        self._params = params
        self.state = {}

    def zero_grad(self, set_to_none=False):
        for p in self._params:
            if p.grad is not None:
                if set_to_none:
                    p.grad = None
                else:
                    p.grad = _C.zeros_like(p)

    def _flat_grad(self):
        return _C.cat([p.grad.reshape(-1) if p.grad is not None
                       else _C.zeros([p.numel()], dtype=p.dtype)
                       for p in self._params], 0)

    def _add_grad(self, step, direction):
        offset = 0
        with no_grad():
            for p in self._params:
                n = p.numel()
                p.add_(direction[offset:offset + n].view(p.shape), alpha=step)
                offset += n

    def step(self, closure):
        group = self.param_groups[0]
        lr = group["lr"]
        max_iter = group["max_iter"]
        max_eval = group["max_eval"]
        tol_grad = group["tolerance_grad"]
        tol_change = group["tolerance_change"]
        history_size = group["history_size"]
        state = self.state.setdefault("_lbfgs", {"func_evals": 0, "n_iter": 0})
        with enable_grad():
            orig_loss = closure()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._flat_grad()
        if flat_grad.abs().max().item() <= tol_grad:
            return orig_loss
        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps = state.get("old_dirs"), state.get("old_stps")
        ro, H_diag = state.get("ro"), state.get("H_diag")
        prev_flat_grad = state.get("prev_flat_grad")
        prev_loss = state.get("prev_loss")
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro = [], [], []
                H_diag = 1.0
            else:
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = _C.dot(y, s).item()
                if ys > 1e-10:
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1. / ys)
                    H_diag = ys / _C.dot(y, y).item()
                al = [0.0] * len(old_dirs)
                q = -flat_grad
                for i in range(len(old_dirs) - 1, -1, -1):
                    al[i] = _C.dot(old_stps[i], q).item() * ro[i]
                    q = q.add(old_dirs[i], alpha=-al[i])
                r = q * H_diag
                for i in range(len(old_dirs)):
                    be_i = _C.dot(old_dirs[i], r).item() * ro[i]
                    r = r.add(old_stps[i], alpha=al[i] - be_i)
                d = r
            prev_flat_grad = flat_grad.clone()
            prev_loss = loss
            if state["n_iter"] == 1:
                t = min(1., 1. / flat_grad.abs().sum().item()) * lr
            else:
                t = lr
            gtd = _C.dot(flat_grad, d).item()
            if gtd > -tol_change:
                break
            self._add_grad(t, d)
            ls_evals = 0
            if n_iter != max_iter:
                with enable_grad():
                    loss = float(closure())
                flat_grad = self._flat_grad()
                ls_evals = 1
            current_evals += ls_evals
            state["func_evals"] += ls_evals
            if n_iter == max_iter or current_evals >= max_eval:
                break
            if flat_grad.abs().max().item() <= tol_grad:
                break
            if (d * t).abs().max().item() <= tol_change:
                break
            if abs(loss - prev_loss) < tol_change:
                break
        state.update(d=d, t=t, old_dirs=old_dirs, old_stps=old_stps, ro=ro,
                     H_diag=H_diag, prev_flat_grad=prev_flat_grad,
                     prev_loss=prev_loss)
        return orig_loss

    def state_dict(self):
        return {"state": dict(self.state), "param_groups": [
            {k: v for k, v in self.param_groups[0].items() if k != "params"}]}

    def load_state_dict(self, state_dict):
        self.state = dict(state_dict["state"])
        self.param_groups[0].update(state_dict["param_groups"][0])
