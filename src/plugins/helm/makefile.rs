//! The Makefile's Helm targets, kubebuilder's (`install-helm`, `helm-deploy`, `helm-uninstall`,
//! `helm-status`, `helm-history`, `helm-rollback`, with its variables `HELM`, `HELM_NAMESPACE`,
//! `HELM_RELEASE`, `HELM_CHART_DIR`, `HELM_EXTRA_ARGS`) and operator-rs's `helm-chart`, which
//! runs `make manifests`, then the plugin. The Makefile is the user's: a run appends the
//! variables and targets it lacks, and changes none it has.

use anyhow::Result;

use crate::scaffold::Plan;

/// The section's heading, kubebuilder's.
const HEADING: &str = "##@ Helm Deployment";

/// The variables, by name: their text (`{namespace}`, `{release}`, `{chart}` filled in).
const VARIABLES: &[(&str, &str)] = &[
    (
        "HELM",
        "## Helm binary to use for deploying the chart\nHELM ?= helm\n",
    ),
    (
        "HELM_NAMESPACE",
        "## Namespace to deploy the Helm release\nHELM_NAMESPACE ?= {namespace}\n",
    ),
    (
        "HELM_RELEASE",
        "## Name of the Helm release\nHELM_RELEASE ?= {release}\n",
    ),
    (
        "HELM_CHART_DIR",
        "## Path to the Helm chart directory\nHELM_CHART_DIR ?= {chart}\n",
    ),
    (
        "HELM_EXTRA_ARGS",
        "## Additional arguments to pass to helm commands\nHELM_EXTRA_ARGS ?=\n",
    ),
];

/// The targets, by name: their text.
const TARGETS: &[(&str, &str)] = &[
    (
        "helm-chart",
        ".PHONY: helm-chart
helm-chart: manifests ## Make the chart again from config/ (kubectl kustomize config/default); keeps values.yaml and the templates you edited.
\t$(OPERATOR_RS) edit --plugins helm/v2-alpha
",
    ),
    (
        "install-helm",
        ".PHONY: install-helm
install-helm: ## Install the latest version of Helm.
\t@command -v $(HELM) >/dev/null 2>&1 || { \\
\t\techo \"Installing Helm...\" && \\
\t\tcurl -fsSL https://raw.githubusercontent.com/helm/helm/main/scripts/get-helm-4 | bash; \\
\t}
",
    ),
    (
        "helm-deploy",
        ".PHONY: helm-deploy
helm-deploy: install-helm ## Deploy manager to the K8s cluster via Helm. Specify an image with IMG.
\tIMG=\"$(IMG)\"; $(HELM) upgrade --install $(HELM_RELEASE) $(HELM_CHART_DIR) \\
\t\t--namespace $(HELM_NAMESPACE) \\
\t\t--create-namespace \\
\t\t--set manager.image.repository=$${IMG%:*} \\
\t\t--set manager.image.tag=$${IMG##*:} \\
\t\t--wait \\
\t\t--timeout 5m \\
\t\t$(HELM_EXTRA_ARGS)
",
    ),
    (
        "helm-uninstall",
        ".PHONY: helm-uninstall
helm-uninstall: ## Uninstall the Helm release from the K8s cluster.
\t$(HELM) uninstall $(HELM_RELEASE) --namespace $(HELM_NAMESPACE)
",
    ),
    (
        "helm-status",
        ".PHONY: helm-status
helm-status: ## Show Helm release status.
\t$(HELM) status $(HELM_RELEASE) --namespace $(HELM_NAMESPACE)
",
    ),
    (
        "helm-history",
        ".PHONY: helm-history
helm-history: ## Show Helm release history.
\t$(HELM) history $(HELM_RELEASE) --namespace $(HELM_NAMESPACE)
",
    ),
    (
        "helm-rollback",
        ".PHONY: helm-rollback
helm-rollback: ## Rollback to previous Helm release.
\t$(HELM) rollback $(HELM_RELEASE) --namespace $(HELM_NAMESPACE)
",
    ),
];

/// What the variables default to.
pub struct Defaults<'a> {
    pub namespace: &'a str,
    pub release: &'a str,
    pub chart: &'a str,
}

/// Appends the variables and targets the Makefile lacks (none without a Makefile: a note says
/// what to add). A `HELM_CHART_DIR` that is not the chart's folder gets a note.
pub fn add_targets(plan: &mut Plan, defaults: &Defaults) -> Result<()> {
    let Some(text) = plan.read("Makefile")? else {
        plan.note(
            "no Makefile: add a target that runs `make manifests`, then `operator-rs edit \
             --plugins helm/v2-alpha`"
                .into(),
        );
        return Ok(());
    };
    let has = |start: &str| text.lines().any(|l| l.starts_with(start));
    if let Some(dir) = text
        .lines()
        .find_map(|l| l.strip_prefix("HELM_CHART_DIR ?="))
        .map(str::trim)
        .filter(|dir| *dir != defaults.chart)
    {
        plan.note(format!(
            "the Makefile's HELM_CHART_DIR is {dir}, the chart is {}: change it there",
            defaults.chart
        ));
    }
    let mut added = String::new();
    for (name, variable) in VARIABLES {
        if !has(&format!("{name} ?=")) {
            added.push_str(
                &variable
                    .replace("{namespace}", defaults.namespace)
                    .replace("{release}", defaults.release)
                    .replace("{chart}", defaults.chart),
            );
        }
    }
    if !added.is_empty() {
        added.push('\n');
    }
    for (name, target) in TARGETS {
        if !has(&format!("{name}:")) {
            added.push_str(target);
            added.push('\n');
        }
    }
    if added.is_empty() {
        return Ok(());
    }
    plan.edit("Makefile", |text| {
        let mut text = text.to_string();
        if !text.ends_with('\n') {
            text.push('\n');
        }
        if !text.lines().any(|l| l.starts_with("##@ Helm")) {
            text.push_str(&format!("\n{HEADING}\n"));
        }
        text.push('\n');
        text.push_str(added.trim_end());
        text.push('\n');
        Ok(text)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEFAULTS: Defaults = Defaults {
        namespace: "memc-system",
        release: "memc",
        chart: "dist/chart",
    };

    #[test]
    fn kubebuilders_targets_once() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("Makefile"), "IMG ?= controller:latest\n").unwrap();
        let mut plan = Plan::new(dir.path(), false);
        add_targets(&mut plan, &DEFAULTS).unwrap();
        let text = plan.read("Makefile").unwrap().unwrap();
        for target in [
            "helm-chart",
            "install-helm",
            "helm-deploy",
            "helm-uninstall",
            "helm-status",
            "helm-history",
            "helm-rollback",
        ] {
            assert_eq!(text.matches(&format!("\n{target}:")).count(), 1, "{target}");
        }
        assert!(text.contains("\nHELM_NAMESPACE ?= memc-system\n"), "{text}");
        assert!(text.contains("\nHELM_CHART_DIR ?= dist/chart\n"), "{text}");
        assert!(
            text.contains("\t\t--set manager.image.repository=$${IMG%:*} \\\n"),
            "{text}"
        );
        std::fs::write(dir.path().join("Makefile"), &text).unwrap();
        let mut again = Plan::new(dir.path(), false);
        add_targets(&mut again, &DEFAULTS).unwrap();
        assert!(again.changes().is_empty());
        assert!(again.notes().is_empty());
    }

    #[test]
    fn an_older_section_gets_what_it_lacks() {
        let dir = tempfile::tempdir().unwrap();
        let old = "##@ Helm chart (helm/v2-alpha plugin)\n\nHELM ?= helm\n\nhelm-chart: manifests\n\tx\n\nhelm-deploy:\n\ty\n\nhelm-uninstall:\n\tz\n";
        std::fs::write(dir.path().join("Makefile"), old).unwrap();
        let mut plan = Plan::new(dir.path(), false);
        add_targets(&mut plan, &DEFAULTS).unwrap();
        let text = plan.read("Makefile").unwrap().unwrap();
        assert!(text.starts_with(old));
        assert!(!text.contains(HEADING));
        assert_eq!(text.matches("HELM ?=").count(), 1);
        assert_eq!(text.matches("\nhelm-deploy:").count(), 1);
        assert!(
            text.contains("\nhelm-rollback:") && text.contains("\ninstall-helm:"),
            "{text}"
        );
    }
}
