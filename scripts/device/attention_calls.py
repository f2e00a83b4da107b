"""Attention through scaled_dot_product_attention, timed forward and backward: shared by
measure-hopper.py, measure-moe-gemm.py and measure-sm-carveout.py."""
import time

from timing import error_text, timed

BACKENDS = {"flash": "FLASH_ATTENTION", "cudnn": "CUDNN_ATTENTION",
            "efficient": "EFFICIENT_ATTENTION"}
FIELDS = ["fwd_ms", "bwd_ms", "fwd_tflops", "bwd_tflops", "error"]


def attention_cells(torch, backend, batch, heads, seq, qk_dim, v_dim, causal, min_ms,
                    cool_s=0.0, warmup=3):
    """FIELDS of one attention configuration on one backend (BACKENDS): the forward, and the
    backward as forward + backward less the forward, in ms and TFLOP/s (forward 2 b h s^2
    (qk_dim + v_dim), half of it causal; backward 2.5 x that), after cool_s idle; a failure as
    its error."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    chosen = getattr(SDPBackend, BACKENDS[backend])
    try:
        q, k = (torch.randn((batch, heads, seq, qk_dim), device="cuda", dtype=torch.bfloat16,
                            requires_grad=True) for _ in range(2))
        v = torch.randn((batch, heads, seq, v_dim), device="cuda", dtype=torch.bfloat16,
                        requires_grad=True)
        grad = torch.randn((batch, heads, seq, v_dim), device="cuda", dtype=torch.bfloat16)

        def forward():
            with sdpa_kernel([chosen]):
                return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)

        def forward_backward():
            forward().backward(grad)
            q.grad = k.grad = v.grad = None

        torch.cuda.synchronize()
        time.sleep(cool_s)
        with torch.no_grad():
            fwd_ms = timed(torch, forward, min_ms, warmup=warmup)
        total_ms = timed(torch, forward_backward, min_ms, warmup=warmup)
    except (RuntimeError, TypeError, ValueError) as error:
        return {"fwd_ms": "", "bwd_ms": "", "fwd_tflops": "", "bwd_tflops": "",
                "error": error_text(error)}
    flops = 2 * batch * heads * seq * seq * (qk_dim + v_dim) * (0.5 if causal else 1.0)
    bwd_ms = max(total_ms - fwd_ms, 1e-9)
    return {"fwd_ms": f"{fwd_ms:.5f}", "bwd_ms": f"{bwd_ms:.5f}",
            "fwd_tflops": f"{flops / fwd_ms / 1e9:.1f}",
            "bwd_tflops": f"{2.5 * flops / bwd_ms / 1e9:.1f}", "error": ""}
