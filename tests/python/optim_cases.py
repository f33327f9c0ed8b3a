"""Runs shared by gen_optim_golden.py (on torch) and test_optim_golden.py
(on ditto): the same code, the module passed in."""


def lbfgs_run(t):
    """x after each of three LBFGS steps (max_iter 4, history 3) on a
    smooth non-quadratic function, float64: the trajectory, not just the
    minimum."""
    x = t.tensor([1.5, -0.5, 2.0], dtype=t.float64).requires_grad_(True)
    A = t.tensor([[3.0, 0.5, 0.1], [0.5, 2.0, 0.3], [0.1, 0.3, 1.0]],
                 dtype=t.float64)
    opt = t.optim.LBFGS([x], lr=0.8, max_iter=4, history_size=3)

    def closure():
        opt.zero_grad()
        loss = (x * (A @ x)).sum() * 0.5 + (x ** 4).sum() * 0.1 - x.sum()
        loss.backward()
        return loss
    steps = []
    for _ in range(3):
        opt.step(closure)
        steps.append(x.detach().numpy().tolist())
    return steps
