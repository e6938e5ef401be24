# Workload profile of opmap-demo-infer with its default flags (examples/README.md), for
# `opmap report --profile` and `opmap analyze --profile`.
model = opmap-demo
# Non-embedding parameters per decoder layer: W_qkv 3h² + W_out h² + W_up 4h² + W_down 4h²
# = 12h², biases 9h, two layer norms 4h → 12·128² + 13·128 = 198,272; × 2 layers.
parameters = 396544
layers = 2
heads = 4
head_dim = 32
hidden = 128
precision = fp32
# One prefill forward pass of --seq 32 tokens per request, --batch 1.
prefill_tokens = 32
batch = 1
phase_mix = prefill=1
# What the demo must meet on this machine at --rate 100 with 2 workers.
sla_p99_ms = 50
throughput_target = 90
quality_metric = checksum_match
quality_threshold = 1
