"""The RL-inclusion study preset, as data: codebooks, frameworks, method catalog.

Facts come from the design brief; owners change them in the app afterwards
(a codebook edit makes a new version). The codebooks carry Simplified Chinese texts
(coding.studies.presets_zh), shown to coders who read Chinese.
"""

from coding.studies import presets_zh

FAILURES = [
    ("entropy_collapse", "Entropy collapse"),
    ("length_bias", "Length bias / response-length drift"),
    ("rollout_training_mismatch", "Rollout-training mismatch"),
    ("stale_rollouts", "Stale rollout data"),
    ("moe_instability", "MoE instability and extreme ratios"),
    ("groups_without_signal", "Groups without signal"),
    ("growing_kl", "Growing KL penalty"),
    ("unexplained_collapse", "Collapse or divergence with no cause named"),
    ("none", "None"),
]

COMPONENTS = [
    ("objective", "Objective or loss"),
    ("advantage", "Advantage or baseline"),
    ("clipping", "Clipping or trust region"),
    ("importance_weighting", "Importance weighting or off-policy correction"),
    ("rollout_filtering", "Rollout sampling or filtering that feeds the gradient"),
    ("reward_shaping", "Task-agnostic reward shaping"),
    ("kl_entropy", "KL or entropy regularisation"),
    ("credit_assignment", "Credit assignment"),
    ("optimiser", "An optimiser made for RL on language models"),
]

RL_METHOD = {"question": "label", "in": ["rl_method"]}


def _options(pairs, multiple=True):
    """Options from (value, label) pairs; in a multiple-choice question "none" is chosen
    alone or not at all."""
    return [{"value": v, "label": label,
             **({"exclusive": True} if multiple and v == "none" else {})}
            for v, label in pairs]


PAPER_CODEBOOK = {
    "name": "Paper codebook",
    "applies_to": "paper",
    "description": "What an arXiv paper proposes, and properties of RL-method papers.",
    "questions": [
        {
            "key": "label", "kind": "single",
            "text": "What does the paper mainly contribute?",
            "definition": "Choose the paper's main contribution, judged from title and abstract.",
            "options": [
                {"value": "rl_method", "label": "RL method",
                 "definition": "Proposes a new or changed training-time RL component: objective or "
                 "loss, advantage or baseline, clipping or trust region, importance weighting or "
                 "off-policy correction, rollout sampling or filtering that feeds the gradient, "
                 "task-agnostic reward shaping, KL or entropy regularisation, credit assignment, "
                 "an optimiser made for RL on language models.",
                 "examples": "A new clipping rule for the policy ratio; a group baseline without a critic."},
                {"value": "rl_application", "label": "RL application",
                 "definition": "Existing RL applied to a task or domain, domain rewards and verifiers included.",
                 "examples": "GRPO with a unit-test reward for code generation."},
                {"value": "analysis", "label": "Analysis",
                 "definition": "Empirical study, reproduction or ablation; no new method."},
                {"value": "systems", "label": "Systems",
                 "definition": "Training systems, asynchronous pipelines, throughput; the objective unchanged."},
                {"value": "offline_preference", "label": "Offline preference",
                 "definition": "DPO-family offline preference optimisation."},
                {"value": "distillation", "label": "Distillation",
                 "definition": "The main objective matches a teacher."},
                {"value": "out_of_scope", "label": "Out of scope"},
            ],
        },
        {
            "key": "scope", "kind": "single", "show_if": RL_METHOD,
            "text": "How widely does the method apply?",
            "options": [
                {"value": "general", "label": "General",
                 "definition": "Applies to RL training of language models at large."},
                {"value": "embedded", "label": "Embedded",
                 "definition": "Tied to one application or domain."},
                {"value": "other", "label": "Other"},
            ],
        },
        {
            "key": "component", "kind": "single", "show_if": RL_METHOD,
            "text": "Which component does the method primarily change?",
            "definition": "One primary component.",
            "options": _options(COMPONENTS),
        },
        {
            "key": "largest_policy_b", "kind": "number", "level": "ratio", "min_value": 0,
            "text": "Largest trained policy, in billions of parameters",
            "definition": "The largest policy the paper trains with the method, or 'not reported'.",
            "options": [{"value": "not_reported", "label": "Not reported"}],
        },
        {
            "key": "changes_existing_loss", "kind": "yes_no", "show_if": RL_METHOD,
            "text": "Does the method change a coefficient, clip, mask or weight in an existing loss?",
        },
        {"key": "code_released", "kind": "yes_no", "text": "Is code released?"},
        {"key": "industry_author", "kind": "yes_no", "text": "Is any author affiliated with industry?"},
        {
            "key": "failure_addressed", "kind": "multiple",
            "text": "Which training failures does the paper say it addresses?",
            "definition": "Any of the listed failures, or none.",
            "options": _options(FAILURES),
        },
    ],
    "translations": {"zh-hans": presets_zh.PAPER},
}

THREAD_CODEBOOK = {
    "name": "Thread codebook",
    "applies_to": "thread",
    "description": "What a framework issue or pull request proposes and how it went, "
    "coded from the thread's own text.",
    "questions": [
        {
            "key": "thread_kind", "kind": "single", "text": "What kind of thread is this?",
            "options": _options([
                ("proposal_pr", "Proposal pull request"), ("request_issue", "Request issue"),
                ("failure_report", "Failure report"), ("other", "Other"),
            ]),
        },
        {
            "key": "method_named", "kind": "text", "required": False,
            "text": "Which method or arXiv identifier does the thread propose or cite?",
        },
        {
            "key": "outcome", "kind": "single", "text": "What was the outcome?",
            "options": _options([
                ("merged", "Merged"), ("open_discussion", "Open, under discussion"),
                ("open_no_reply", "Open without a maintainer reply"), ("declined", "Declined"),
                ("redirected", "Redirected elsewhere"),
                ("lapsed", "Lapsed (closed as inactive or stale)"),
            ]),
        },
        {
            "key": "stated_reasons", "kind": "multiple",
            "show_if": {"question": "outcome", "in": ["declined", "redirected"]},
            "text": "Which reasons did the maintainers state?",
            "options": _options([
                ("maintenance_burden", "Maintenance burden"), ("placement", "Placement"),
                ("evidence", "Evidence"), ("already_covered", "Already covered"),
                ("demand", "Demand"),
            ]),
        },
        {"key": "reply_by_other", "kind": "yes_no",
         "text": "Did anyone other than the proposer reply?"},
        {
            "key": "concerns", "kind": "multiple", "text": "Which concerns did reviewers raise?",
            "options": _options([
                ("design_interface", "Design or interface"),
                ("tests_docs", "Tests or documentation"), ("other", "Other"), ("none", "None"),
            ]),
        },
        {
            "key": "failure_reported", "kind": "single",
            "text": "Which training failure does the thread report?",
            "options": _options(FAILURES, multiple=False),
        },
    ],
    "translations": {"zh-hans": presets_zh.THREAD},
}

# Removed from everything a coder receives: inclusion of a paper's method in a
# framework; a thread's state, merged flag, labels and closing events.
BLINDED_FIELDS = [
    "included_in", "state", "merged", "labels", "closed_at", "events", "thread.url", "thread.updated",
]

FRAMEWORKS = [
    ("verl", "verl-project/verl"),
    ("TRL", "huggingface/trl"),
    ("OpenRLHF", "OpenRLHF/OpenRLHF"),
    ("NeMo-RL", "NVIDIA-NeMo/RL"),
    ("AReaL", "areal-project/AReaL"),
    ("ROLL", "alibaba/ROLL"),
    ("slime", "THUDM/slime"),
]

# (method, first public, {framework: option name}); a name is one of the three kinds
# coding.catalog.names reads: `gspo`, `*is_correction`, `importance_sampling=seq`.
METHODS = [
    ("Clip-higher", "2025-03-18", {
        "verl": "clip_ratio_high", "TRL": "epsilon_high", "OpenRLHF": "eps_clip_low_high",
        "NeMo-RL": "ratio_clip_max", "ROLL": "pg_clip_high", "slime": "eps_clip_high",
        "AReaL": "eps_clip_higher"}),
    ("GSPO", "2025-07-24", {
        "verl": "gspo", "TRL": "importance_sampling_level", "OpenRLHF": "gspo",
        "NeMo-RL": "sequence_level_importance_ratios", "ROLL": "importance_sampling=seq",
        "slime": "gspo", "AReaL": "gspo"}),
    ("Dynamic sampling", "2025-03-18", {
        "verl": "filter_groups", "OpenRLHF": "dynamic_filtering",
        "NeMo-RL": "use_dynamic_sampling", "ROLL": "difficulty_mask",
        "slime": "dynamic_sampling_filter", "AReaL": "dynamic_bs"}),
    ("Dr. GRPO", "2025-03-26", {
        "verl": "norm_adv_by_std_in_grpo", "TRL": "dr_grpo", "OpenRLHF": "dr_grpo",
        "ROLL": "seq-mean-token-sum-norm", "slime": "disable_grpo_std_normalization",
        "AReaL": "adv_norm.std_level=none"}),
    ("CISPO", "2025-06-16", {
        "verl": "cispo", "TRL": "cispo", "NeMo-RL": "use_cispo", "ROLL": "cispo",
        "slime": "cispo", "AReaL": "use_cispo_loss"}),
    ("Truncated importance sampling (TIS)", "2025-08", {
        "verl": "rollout_is", "TRL": "vllm_importance_sampling_correction",
        "OpenRLHF": "*is_correction", "NeMo-RL": "truncated_importance_sampling_ratio",
        "ROLL": "tis", "slime": "use_tis"}),
    ("PPO (clipped surrogate, GAE)", "2017-07-20", {}),
    ("Dual-clip PPO", "2019-12-20", {}),
    ("k3 KL estimator", "2020-03-07", {}),
    ("ReMax", "2023-10-16", {}),
    ("GRPO", "2024-02-05", {}),
    ("RLOO", "2024-02-22", {}),
]
