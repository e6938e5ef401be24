// Layer types of the kernel families LLM servers run (docs/metrics.md, "Kernel type and
// layer type", notes on the rows), one test per family. In a CUDA/HIP-graph replay no
// operator encloses a kernel, so its name alone decides its layer type. Names come from
// shared/traces/inference/ (AMD MI300X: vLLM gpt-oss and SGLang Qwen3-8B decode, replay and
// capture traces) unless the entry says otherwise; very long names keep their discriminating
// part. The traces themselves stay out of the repository.
#include <string>
#include <string_view>
#include <vector>

#include "analysis/taxonomy/layer_taxonomy.h"
#include "gtest/gtest.h"

namespace opmap::analysis {
namespace {

struct SeenKernel {
  const char* name;
  const char* from;  // where the name was seen
};

void ExpectAllOfType(LayerType type, const std::vector<SeenKernel>& kernels) {
  for (const SeenKernel& k : kernels) {
    SCOPED_TRACE(k.from);
    EXPECT_EQ(LayerTypeName(ClassifyKernelName(k.name)), LayerTypeName(type)) << k.name;
  }
}

// hipBLASLt and rocBLAS run Tensile kernels named after the contraction (C[i,j,k] = A·B),
// never "gemm": without the `cijk_` rule these were other, 59% of SGLang's decode.
TEST(ServingKernelsTest, HipBlasLtTensileGemmsAreMatmul) {
  ExpectAllOfType(
      LayerType::kMatmul,
      {
          {"Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x32x64_MI16x16x1_SN_LDSB1_AFC1_"
           "AFEM1_AFEM1_ASEM1_CLR1_CADS0_DTLA0_DTLB0_DTVA0_DTVB0_EPS0_FDSI0_GRPM1_GRVWA8_GRVWB8_"
           "GSUAMBSK_GLS0_ISA942_IU1_K1_LDSTI0_LBSPPA512_LBSPPB256_LBSPPM0_LPA16_LPB16_LPM0_"
           "LRVW8_LWPMn1_MIAV0_MIWT4_2_MO40_NTn1_NTA0_NTB0_NTC0_NTD4_NTM0_NEPBS16_NLCA1_NLCB1_"
           "ONLL1_PGR2_PLR1_PKA1_SIA3_SS1_SPO0_SRVW0_SSO0_SVW4_SK0_SKFTR0_SKXCCM0_TLDS1_"
           "ULSGRO0_USL1_UIOFGRO0_USFGROn1_VSn1_VWA4_VWB2_WSGRA0_WSGRB0_WS64_WG64_4_1",
           "sglang_decode replay: the MLP up/gate GEMM, full name"},
          {"Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT448x32x64_MI16x16x1_SN_LDSB1_...",
           "vllm_decode_full replay: the LM head (aten::mm in the capture)"},
          {"Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT16x16x256_MI16x16x1_SN_LDSB1_...",
           "vllm_decode_full replay: the MoE router, 2880 -> 32 (aten::addmm in the capture)"},
          {"Cijk_Ailk_Bjlk_SB_Bias_AS_SAV_UserArgs_MT64x16x16_MI16x16x1_SN_LDSB0_AFC1_...",
           "shared/traces/hta_mi250_rocm.json.gz: MI250, another layout"},
      });
  // A letter before "cijk_" makes it part of another word.
  EXPECT_EQ(ClassifyKernelName("xcijk_like_name"), LayerType::kOther);
}

// OpenAI triton_kernels' MoE GEMMs (vLLM's gpt-oss path): 67% of the vLLM decode step.
// The `_swiglu` variant was elementwise (row 9's "swiglu") and the others other.
TEST(ServingKernelsTest, TritonMoeMatmulOgsAreMatmul) {
  ExpectAllOfType(
      LayerType::kMatmul,
      {
          {"_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1_swiglu",
           "vllm_decode_full replay: gate/up experts with the SwiGLU fused"},
          {"_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1", "vllm_decode_full replay: down experts"},
          {"_finalize_matmul_scatter_bf16",
           "vllm_decode_full replay: sums each token's experts' outputs"},
          {"_p_matmul_ogs_NNT_bf16xbf16xmxfp4_128x256x128x1",
           "triton_kernels' persistent variant (name built as its source does; no trace)"},
      });
}

// Other fused-MoE GEMMs: vLLM's/SGLang's Triton fused_moe, aiter's assembly fmoe (names as
// aiter's hsa/gfx942/fmoe kernel lists give them), CK's MoE GEMM, TRT-LLM's cutlass MoE.
TEST(ServingKernelsTest, FusedMoeGemmsAreMatmul) {
  ExpectAllOfType(
      LayerType::kMatmul,
      {
          {"fused_moe_kernel", "vLLM/SGLang Triton MoE (NVIDIA and ROCm)"},
          {"_ZN5aiter47fmoe_bf16_blockscaleFp8_g1u1_vs_silu_1tg_32x256E",
           "aiter asm MoE; its \"silu\" made it elementwise"},
          {"_ZN5aiter49fmoe_stage1_bf16_pertokenInt8_g1u1_32x128_3tg_pf3E",
           "aiter asm 2-stage MoE, stage 1"},
          {"void ck::kernel_moe_gemm<ck::GridwiseMoeGemm<...> >(...)", "CK MoE GEMM"},
          {"void moe::dev::finalize::finalizeKernelVecLoad<moe::dev::finalize::KernelParam"
           "s<cutlass::bfloat16_t, cutlass::bfloat16_t, 4, true> >(...)",
           "shared/traces/tl_b200_eager_trace.json.gz: TRT-LLM MoE finalize"},
      });
  // fmoe is a rule only under aiter's namespace: other libraries' "fmoe" means other things.
  EXPECT_EQ(ClassifyKernelName("fmoe_cuda_local_scatter"), LayerType::kOther);
}

// Paged attention: vLLM's ROCm ll4mi kernels (used by SGLang too) and vLLM's CUDA ones.
TEST(ServingKernelsTest, PagedAttentionIsAttention) {
  ExpectAllOfType(
      LayerType::kAttention,
      {
          {"void paged_attention_ll4mi_QKV_mfma16_kernel<0, __hip_bfloat16, __hip_bfloat16,"
           " (vllm::Fp8KVCacheDataType)0, 1, 128, 256, false, 4, 1, ck_tile::ComposedAtten"
           "tion<0u, false> >(__hip_bfloat16 const*, __hip_bfloat16 const*, __hip_bfloat16"
           " const*, float, int const*, int const*, int const*, float const*, int, int, in"
           "t, int, float*, float*, __hip_bfloat16*, float, float, float const*, float con"
           "st*, float const*, ck_tile::ComposedAttention<0u, false> const*)",
           "sglang_decode replay: 20% of the step"},
          {"void paged_attention_ll4mi_reduce_kernel<__hip_bfloat16, __hip_bfloat16, 128, 1"
           "28, 256, 3, false>(__hip_bfloat16*, float const*, float const*, __hip_bfloat16 "
           "const*, int const*, int const*, int, int, float const*)",
           "sglang_decode replay: merges the partitions of the kernel above"},
          {"void vllm::paged_attention_v1_kernel<__nv_bfloat16, __nv_bfloat16, 128, 16, 128"
           ", (vllm::Fp8KVCacheDataType)0, false>(...)",
           "vLLM CUDA (name form from its source)"},
      });
}

// vLLM's Triton unified attention: the 3D form splits the KV sequence into segments and
// `reduce_segments` merges them, as ll4mi's reduce kernel does.
TEST(ServingKernelsTest, UnifiedAttentionIsAttention) {
  ExpectAllOfType(LayerType::kAttention,
                  {
                      {"kernel_unified_attention_2d", "vllm_decode_full replay"},
                      {"kernel_unified_attention_3d", "vllm_decode_full replay"},
                      {"reduce_segments", "vllm_decode_full replay: was other"},
                  });
  // Only that kernel: a name merely containing the words is not attention.
  EXPECT_EQ(ClassifyKernelName("segmented_reduce_segments_kernel"), LayerType::kOther);
  EXPECT_EQ(ClassifyKernelName("reduce_segments_sum"), LayerType::kOther);
}

// aiter's and CK's attention. aiter's assembly kernels are mangled `_ZN5aiter<len><name>`,
// so its `pa_`/`mla_` names follow a digit (aiter's hsa/gfx942/{pa,mla} kernel lists).
TEST(ServingKernelsTest, AiterAndCkAttentionIsAttention) {
  ExpectAllOfType(
      LayerType::kAttention,
      {
          {"_ZN5aiter32pa_bf16_pertokenFp8_gqa16_2tg_4wE", "aiter asm paged attention"},
          {"_ZN5aiter42PA_A16W8_BLK1024_1TG_4W_16mx1_64nx4_MTP_PSE",
           "aiter asm paged attention, upper case"},
          {"_ZN5aiter39mla_dec_stage1_bf16_a16w16_subQ16_mqa16E", "aiter asm MLA decode"},
          {"_ZN5aiter18fmha_fwd_hd128_fp8E", "aiter asm flash attention"},
          {"_ZN7ck_tile6kentryILi1ENS_13FmhaFwdKernelINS_...", "ck_tile FMHA"},
      });
  // aiter kernels that are not attention keep their own type.
  EXPECT_EQ(ClassifyKernelName("_ZN5aiter24add_rmsnorm_quant_kernelIDF16bDF16bLi64ELi8ELb0ELb0E"
                               "Lb1ELi1EEEvPT0_PT_PfS4_S4_S4_diiiiiiib"),
            LayerType::kNorm);
  EXPECT_EQ(ClassifyKernelName("_ZN5aiter12opa_somethingE"), LayerType::kOther);
  EXPECT_EQ(ClassifyKernelName("xmla_decode"), LayerType::kOther);
}

// RMSNorm: ck_tile's Rmsnorm2dFwd (vLLM ROCm via aiter) and aiter's fused add+quant norm.
TEST(ServingKernelsTest, RmsnormVariantsAreNorm) {
  ExpectAllOfType(
      LayerType::kNorm,
      {
          {"_ZN7ck_tile6kentryILi1ENS_12Rmsnorm2dFwdINS_27Rmsnorm2dFwdPipelineOnePassINS_27"
           "Rmsnorm2dFwdPipelineProblemIDF16bDF16bfDF16bDF16bDF16bffNS_19Generic2dBlockShap"
           "eINS_8sequenceIJLi1ELi3072EEEENS5_IJLi1ELi128EEEENS5_IJLi1ELi8EEEEEENS_18Rmsnor"
           "m2dFwdTraitsILb1ELb0ELb0ELb0ELNS_21Rmsnorm2dFusedAddEnumE1ELNS_23Rmsnorm2dFused"
           "QuantEnumE0ELNS_22Rmsnorm2dSensitiveEnumE0EEEEENS_33Rmsnorm2dFwdPipelineDefault"
           "PolicyEEENS_17Default2DEpilogueINS_24Default2DEpilogueProblemIfDF16bLb0ELb1ELb0"
           "EEEvEEEEJNSM_5KargsEEEEvDpT1_",
           "vllm_decode_full replay: aiter::rmsnorm2d_fwd_with_add_ck in the capture"},
          {"_ZN5aiter24add_rmsnorm_quant_kernelIDF16bDF16bLi256ELi16ELb1ELb0ELb1ELi1EEEvPT0"
           "_PT_PfS4_S4_S4_diiiiiiib",
           "sglang_decode replay: aiter::rmsnorm in the capture"},
          {"triton_red_fused__to_copy_add_copy__mean_mul_pow_rsqrt_3",
           "shared/traces/tl_b200_eager_trace.json.gz: Inductor RMSNorm"},
      });
}

// Inductor pointwise kernels are elementwise, whatever operators they are named after: row
// 5 skips `triton_poi_`, `triton_red_` and `triton_per_`, as row 1 skips `triton_`.
TEST(ServingKernelsTest, InductorPointwiseIsElementwise) {
  ExpectAllOfType(LayerType::kElementwise,
                  {
                      {"triton_poi_fused_0", "vllm_decode_full replay"},
                      {"triton_poi_fused__to_copy_1", "vllm_decode_full replay"},
                      {"triton_poi_fused_constant_pad_nd_moe_forward_0",
                       "vllm_decode_full replay: pads the MoE's input"},
                      {"triton_poi_fused_moe_forward_0",
                       "the same kernel fused with no other op: made up; \"fused_moe\" was matmul"},
                      {"triton_poi_fused__scaled_mm_mul_0", "made up: \"_scaled_mm\" was matmul"},
                  });
  // Inductor's GEMM templates stay matmul, and a reduction is never matmul.
  EXPECT_EQ(ClassifyKernelName("triton_tem_fused_mm_0"), LayerType::kMatmul);
  EXPECT_EQ(ClassifyKernelName("triton_red_fused_cutlass_0"), LayerType::kOther);
  EXPECT_EQ(ClassifyKernelName("triton_per_fused_addmm_gemm_1"), LayerType::kOther);
  EXPECT_EQ(KernelNameTableRow("triton_poi_fused_moe_forward_0"), 9);
}

// MoE routing (top-k over router logits, sorting tokens by expert) is other: no GEMM FLOPs,
// and a cost to see apart (4.6% of the vLLM step). Fused top-k + softmax gating is softmax.
TEST(ServingKernelsTest, MoeRoutingIsOther) {
  ExpectAllOfType(
      LayerType::kOther,
      {
          {"_topk_forward", "vllm_decode_full replay: TopK in TraceLens"},
          {"_sum_bitmatrix_rows", "vllm_decode_full replay: SortTokens in TraceLens"},
          {"_combined_routing_memset",
           "vllm_decode_full replay: row 2's memset is anchored, so not memcpy"},
          {"_combined_routing_compute", "vllm_decode_full replay"},
          {"void moe::dev::routing::routingIndicesOffsetsKernel<moe::dev::routing::routingR"
           "enormalize::KernelParams<__nv_bfloat16, __nv_bfloat16, 128, false, true> >(...)",
           "shared/traces/tl_b200_eager_trace.json.gz: TRT-LLM routing"},
          {"void moe_align_block_size_kernel<int>(...)", "vLLM/SGLang (source)"},
          {"_ZN7ck_tile6kentryILi1ENS_16MoeSortingKernelINS_17MoeSortingProblemIifLi4ELb1E"
           "Lb0EEEEEJNS2_5KargsEEEEvDpT0_",
           "ck_tile MoE sorting (name form from its source)"},
      });
  EXPECT_EQ(ClassifyKernelName("void vllm::moe::topkGatingSoftmax<4, 64, 4, 16>(...)"),
            LayerType::kSoftmax);
}

// NCCL and RCCL collectives, and the custom all-reduce kernels of vLLM, SGLang and aiter.
// Layer type only: the kernel type stays HTA's (`^nccl.*Kernel`).
TEST(ServingKernelsTest, CollectivesAreCommunication) {
  ExpectAllOfType(
      LayerType::kCommunication,
      {
          {"ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
           "shared/traces/tl_b200_eager_trace.json.gz"},
          {"ncclDevKernel_Generic_4(ncclDevKernelArgsStorage<4096ul>)",
           "RCCL names its kernels as NCCL does"},
          {"rccl_main_kernel(ncclDevComm*, unsigned long, ncclWork*)", "older RCCL"},
          {"void vllm::cross_device_reduce_1stage<__hip_bfloat16, 8>(...)",
           "vLLM custom all-reduce (ROCm and CUDA)"},
          {"_ZN5aiter26cross_device_reduce_2stageI14__hip_bfloat16Li8EEEvPNS_6RankDataE...",
           "aiter custom all-reduce"},
      });
  EXPECT_EQ(ClassifyKernelType("rccl_main_kernel(ncclDevComm*, unsigned long, ncclWork*)", false),
            KernelType::kComputation);
  EXPECT_EQ(ClassifyKernelType("ncclDevKernel_Generic_4(ncclDevKernelArgsStorage<4096ul>)", false),
            KernelType::kCommunication);
  // Anchored: a name that merely contains "rccl" is not a collective.
  EXPECT_EQ(ClassifyKernelName("my_rccl_helper"), LayerType::kOther);
}

// Writing K and V into the paged cache is a copy, in vLLM and SGLang alike.
TEST(ServingKernelsTest, KvCacheWritesAreMemcpy) {
  ExpectAllOfType(
      LayerType::kMemcpy,
      {
          {"void (anonymous namespace)::store_kvcache<2048l, 4, false, long>((anonymous nam"
           "espace)::StoreKVCacheParams)",
           "sglang_decode replay: sglang::store_cache in the capture; was other"},
          {"void vllm::reshape_and_cache_flash_kernel<__hip_bfloat16, __hip_bfloat16, (vllm"
           "::Fp8KVCacheDataType)0>(__hip_bfloat16 const*, __hip_bfloat16 const*, __hip_bfl"
           "oat16*, __hip_bfloat16*, long const*, long, long, long, long, long, int, int, i"
           "nt, float const*, float const*, int)",
           "vllm_decode_full replay"},
      });
}

// The serving rules must not move NVIDIA names of the same families.
TEST(ServingKernelsTest, NvidiaNamesKeepTheirType) {
  const std::vector<std::pair<const char*, LayerType>> kernels = {
      {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_"
       "segment_k_off_kernel__5x_cublas",
       LayerType::kMatmul},
      {"void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_ali"
       "gn8>(cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_align8::Params)",
       LayerType::kMatmul},
      {"nvjet_tst_64x64_64x16_2x1_2cta_v_bz_bias_TNT", LayerType::kMatmul},
      {"void vllm::paged_attention_v2_kernel<__nv_bfloat16, __nv_bfloat16, 128, 16, 128, "
       "(vllm::Fp8KVCacheDataType)0, false, 512>(...)",
       LayerType::kAttention},
      {"void flashinfer::BatchPrefillWithPagedKVCacheKernel<...>(...)", LayerType::kAttention},
      {"fmhaSm100aKernel_QkvE4m3OBfloat16H64PagedKvCausalP16VarSeqQ128Kv128PersistentContext",
       LayerType::kAttention},
      {"void flash::flash_fwd_splitkv_mla_kernel<...>(...)", LayerType::kAttention},
      {"void vllm::rms_norm_kernel<c10::BFloat16, 8, 2>(...)", LayerType::kNorm},
      {"ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
       LayerType::kCommunication},
  };
  for (const auto& [name, type] : kernels) {
    EXPECT_EQ(LayerTypeName(ClassifyKernelName(name)), LayerTypeName(type)) << name;
  }
}

}  // namespace
}  // namespace opmap::analysis
