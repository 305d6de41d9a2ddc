"""Published shapes and constants behind the empirical rules of ``rules.py``, each with where it was read.

Pure data (no imports from the package): depths and widths as their authors trained them, and the
locations at which each number was checked against a stored public source. Sizes derived
from these shapes use the paper's count 12·L·d² (Kaplan et al. 2020), the convention of ``rules.py``.
"""
from __future__ import annotations

# ---- Levine et al. NeurIPS fit ln d = a + b·L: quoted by two independent users (the paper's own text
# is not in the stored corpora)
LEVINE_A, LEVINE_B = 5.039, 0.0555
LEVINE_BLOOMBERG = ("Wu et al. 2023, 'BloombergGPT' (arXiv 2303.17564), Section 3.2 'Shape': quotes Levine et al.'s "
                    "D = exp(5.039)·exp(0.0555·L) and chose L = 70, D = 7510 (the fit gives 7,510 at L = 70)")
LEVINE_BIGSCIENCE = ("bigscience-workshop/bigscience math/README.md (commit 039de1272e7514cf2dc453f47a72852f942c7404), "
                     "section 'Width-depth tradeoff': a = 5.039, b = 5.55e-2 in N = 12·L·exp(2a + 2bL), citing "
                     "'The Depth-to-Width Interplay in Self-Attention'")

# ---- nanochat (karpathy/nanochat, master)
NANOCHAT_TRAIN = ("karpathy/nanochat scripts/base_train.py on master (commit 23acb17f173fa22ae42435a90f4195b1220852f0): "
                  "--aspect-ratio default 64 (model_dim = depth * aspect_ratio), --head-dim default 128, build_model_meta "
                  "rounds model_dim up to a multiple of head_dim and sets num_heads = model_dim // head_dim; "
                  "--window-pattern default 'SSSL' (S = sliding window of half the context, L = full attention, tiled "
                  "across layers)")
NANOCHAT_LOG = ("karpathy/nanochat dev/LOG.md (commit 437943bd90a0e01c46afc445de4022ffeefaae9c): entry 2026-01-17, aspect "
                "ratio 64 beat 128 at a fixed 1e18 FLOPs; a later entry runs a d12-d28 ladder")

# ---- the threshold rule (theory)
THRESHOLD_SOURCE = ("verified: the threshold log3(d_x) is stated in the stored paper text (sources/003, arXiv 2006.12467 v1) "
                    "and the authors' post (sources/000, kdnuggets.com/2020/07/depth-useful-self-attention.html: the depth threshold L_th(d_x) = log_3(d_x))")

# ---- LLaMA-3 (torchtitan flavors) and MobileLLM (model card)
TORCHTITAN_SOURCE = ("pytorch/torchtitan torchtitan/models/llama3/flavors.py (commit 10503c1c3c113e0715f203b11a505e0b817289c3): "
                     "_1b dim 2048 n_layers 16, _3b 3072/28, _8b 4096/32, _70b 8192/80, _405b 16384/126; the 8B/70B/405B "
                     "entries also in torchtitan/models/llama3/__init__.py llama3_configs (commit 00f555e1114a8286eb1d4e379cae67d56156b61d)")
MOBILELLM_SOURCE = ("verified: model card huggingface.co/facebook/MobileLLM-125M (stored page): layers/heads/KV heads/dimension "
                    "125M 30/9/3/576, 350M 32/15/5/960, 600M 40/18/6/1152, 1B 54/20/5/1280, 1.5B 54/25/5/1600; "
                    "the paper's claim that depth matters more than width for small models is quoted in stored "
                    "summaries of arXiv 2402.14905")
LLAMA3_SHAPES = ((16, 2048), (28, 3072), (32, 4096), (80, 8192), (126, 16384))  # 1B, 3B, 8B, 70B, 405B
MOBILELLM_SHAPES = ((30, 576), (32, 960), (40, 1152), (54, 1280), (54, 1600))  # 125M, 350M, 600M, 1B, 1.5B

# ---- Chinchilla (Hoffmann et al. 2022, arXiv 2203.15556): Table A9 "All models", (n_layers, d_model)
# of the 50 trained shapes in table order (44M to 16,183M parameters as the table counts them), and
# Table 4's Chinchilla 70B. Every A9 shape has ffw_size = 4·d_model, so 12·L·d² counts its layers.
CHINCHILLA_A9 = (
    (8, 512), (9, 576), (10, 640), (13, 640), (16, 640), (12, 768), (15, 768), (18, 768), (14, 896), (16, 896),
    (18, 896), (16, 1024), (18, 1024), (20, 1024), (18, 1280), (21, 1280), (18, 1408), (24, 1280), (21, 1408),
    (19, 1536), (24, 1408), (22, 1536), (25, 1536), (20, 1792), (23, 1792), (26, 1792), (22, 2048), (22, 2176),
    (25, 2048), (28, 2048), (25, 2176), (24, 2304), (28, 2176), (28, 2304), (32, 2304), (26, 2560), (30, 2560),
    (34, 2560), (36, 2688), (36, 2816), (36, 2944), (36, 3072), (40, 3584), (42, 4096), (47, 4352), (44, 4608),
    (47, 4608), (47, 4864), (49, 4992), (47, 5120),
)
CHINCHILLA_T4 = (80, 8192)
CHINCHILLA_A9_SOURCE = ("Hoffmann et al. 2022 (arXiv 2203.15556), Appendix, Table A9 'All models' (LaTeX label "
                        "tab:all_models): read in a stored copy of the paper's source, SanyuR132/eliciting-situational-"
                        "awareness data/papers/not_evals_papers/chinchilla/chunks_gpt-4o-mini_by_character_2500_0.15/"
                        "chunk3.md (search excerpt; e.g. 1,018M = 23 x 1792, 9,293M = 42 x 4096, 16,183M = 47 x 5120), "
                        "checked row by row against Vermeille/papote model_specs/chinchilla.py (commit "
                        "337eb7761d9a554ec018ee7ab456375807b26d83), 50 rows")
CHINCHILLA_T4_SOURCE = ("Hoffmann et al. 2022, Table 4: Chinchilla 70B = 80 layers x 8192 (as the catalogue row "
                        "chinchilla-70b cites it; the table itself was not in a stored excerpt)")

# ---- DeepSeek LLM (arXiv 2401.02954): the two trained shapes and the compute-optimal law (eq. 4)
DEEPSEEK_SHAPES = ((30, 4096), (95, 8192))  # 7B, 67B
DEEPSEEK_SOURCE = ("DeepSeek-AI 2024, 'DeepSeek LLM' (arXiv 2401.02954): 7B = 30 layers x 4096, 67B = 95 x 8192 (the "
                   "67B deepened rather than widened); read in stored copies of the released configs: "
                   "huggingface.co/Faust345/Deepseek-llm-code-test-0.1 config.json (_name_or_path deepseek-ai/deepseek-"
                   "llm-7b-base: num_hidden_layers 30, hidden_size 4096) and huggingface.co/Vivacem/DeepSeek-67B-MMIQC "
                   "config.json (from deepseek-ai/deepseek-llm-67b-base: 95, 8192, 8 KV heads)")
DEEPSEEK_LAW = {"m_base": 0.1715, "m_exponent": 0.5243, "d_base": 5.8316, "d_exponent": 0.4757}
DEEPSEEK_LAW_SOURCE = ("arXiv 2401.02954 eq. (4): M_opt = 0.1715·C^0.5243, D_opt = 5.8316·C^0.4757, M the non-embedding "
                       "FLOPs per token (attention included), C the compute; second-hand: from the outside fact-check "
                       "quoted in the reference card; no stored excerpt of the paper shows these numbers (searched)")

# ---- MiniCPM (arXiv 2404.06395; released configs)
MINICPM_SHAPES = ((52, 1536), (40, 2304))  # 1.2B, 2.4B (both "deep and thin")
MINICPM_SOURCE = ("Hu et al. 2024, 'MiniCPM' (arXiv 2404.06395); shapes read in the released configs: "
                  "huggingface.co/openbmb/MiniCPM-2B-dpo-fp16 config.json (commit 6cd6deef1d7a0e10d0b9632fbbfca0c418551442: "
                  "num_hidden_layers 40, hidden_size 2304) and a stored copy of openbmb/MiniCPM-1B-sft-bf16's config "
                  "(huggingface.co/neihc/SLM_qlora config.json: num_hidden_layers 52, hidden_size 1536, 8 KV heads; "
                  "the same shape in openbmb/MiniCPM-S-1B-sft config.json)")

# ---- Depth Delusion (arXiv 2601.20994)
DEPTH_DELUSION_SOURCE = ("arxiv.org/html/2601.20994v1 (stored): abstract 'D_crit ∝ W^0.44' over 17M-7B parameters "
                         "(30 architectures), W the hidden dimension; Figure 1: W = 512 gives D_crit = 16")
DEPTH_DELUSION_KAPPA_SOURCE = ("D_crit ≈ 2.43·ln W appears only in third-party reviews of the paper (stored: the "
                               "themoonlight.io review), not in the paper's stored text; natural log fits Figure 1 "
                               "(2.43·ln 512 = 15.2 vs 16)")

# ---- Kaplan et al. 2020 (arXiv 2001.08361), Figure 5 and Section 3.1
KAPLAN_SHAPES = ((48, 1600), (6, 4288))  # the caption's two shapes of near-equal loss (within 3%)
KAPLAN_SOURCE = ("Kaplan et al. 2020 (arXiv 2001.08361), Figure 5 and Section 3.1: at fixed size the aspect ratio "
                 "d_model/n_layer can vary by a factor of 40 while the loss changes only a few percent (50M, 274M, "
                 "1.5B models); the caption puts (n_layer, d_model) = (6, 4288) within 3% of (48, 1600). Second-hand: "
                 "the paper's text is not stored; a stored lecture note quotes the caption, and the abstract "
                 "(huggingface.co/papers/2001.08361) says width and depth have minimal effects within a wide range. "
                 "The '20 to 200' band of earlier versions is not Kaplan et al.'s and is not used")
