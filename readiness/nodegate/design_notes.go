package nodegate

// Notes for maintainers: library choices where the project's reference
// document (shared/reference/eviction-node.md, Part 2) differs, or leaves a
// question open. No upstream implementation of pod-selector gates exists;
// the condition rules follow node-readiness-controller v0.5.0.
//
//  1. Duplicate or empty gate names, and (PerGate mode) names that make an
//     invalid taint key, are errors from Evaluate, as the project brief asks;
//     the reference instead reported such gates as not ready with reasons
//     DuplicateGateName / InvalidGateName.
//  2. An empty TaintKey means DefaultTaintKey (the reference made the key
//     required); keys in node.kubernetes.io/ and
//     node.cloudprovider.kubernetes.io/ are refused.
//  3. EmptySelector and EmptyNamespaceMeans are booleans
//     (EmptySelectorMatchesAll, EmptyNamespaceInvalid) with the reference's
//     defaults.
//  4. A Failed pod never counts as ready and a Succeeded pod only with
//     SucceededPodsAreReady, whatever Ready condition it still carries; the
//     reference judged them by the condition, which the kubelet sets False.
//  5. Not implemented: the webhook's cross-rule check (two rules with the
//     same taint key and effect whose node selectors may overlap) and its
//     NoExecute warning; ValidateRule checks one rule.
