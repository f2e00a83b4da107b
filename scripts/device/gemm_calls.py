"""One GEMM as a callable, shared by scripts/device/measure-hopper.py and measure-step-mix.py."""


def gemm_call(torch, dtype, m, n, k):
    """C[m,n] = A[m,k] B[k,n] on random data. dtype: bf16 (torch.matmul); fp8 (E4M3, one scale
    per tensor, BF16 output, torch._scaled_mm, which calls cuBLASLt as Transformer Engine's
    per-tensor recipes do; FP32 accumulation kept exact, as their dgrad/wgrad GEMMs run);
    fp8fast (the same with cuBLASLt's fast accumulation, as their forward GEMMs run)."""
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    if dtype == "bf16":
        return lambda: torch.matmul(a, w.t())
    fp8 = torch.float8_e4m3fn
    a8, w8 = (a * 0.1).to(fp8), (w * 0.1).to(fp8)
    one = torch.ones((), device="cuda", dtype=torch.float32)
    fast = dtype == "fp8fast"
    return lambda: torch._scaled_mm(a8, w8.t(), scale_a=one, scale_b=one,
                                    out_dtype=torch.bfloat16, use_fast_accum=fast)
