//! Command-line definitions (clap derive). Parsing only: each command's work lives in
//! `src/commands/<command>.rs`.

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::boilerplate::License;
use crate::plugins::ApiPluginArgs;
use crate::project::WebhookCerts;

#[derive(Debug, Parser)]
#[command(
    name = "operator-rs",
    version,
    about = "Scaffold Kubernetes operators in Rust on kube-rs, the kubebuilder way",
    long_about = "operator-rs writes complete Kubernetes operator projects on the kube-rs stack: a manager \
binary, custom resource types, controllers, RBAC and kubebuilder's config/ kustomize layout. Every \
command records what it did in PROJECT (kubebuilder's version \"3\" format).",
    after_help = "Examples:
  mkdir memcached-operator && cd memcached-operator
  operator-rs init --domain example.com --owner \"Acme Corp\"
  operator-rs create api --group cache --version v1alpha1 --kind Memcached
  make manifests && cargo test"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,

    /// Show the output of the programs operator-rs runs (`make manifests`) as they run; without
    /// it, their output is shown only if they fail.
    #[arg(long, global = true)]
    pub verbose: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Initialize a new operator project in the current folder.
    #[command(after_help = "Examples:
  # A cluster-scoped operator for APIs under example.com
  operator-rs init --domain example.com --owner \"Acme Corp\"

  # A manager that watches only its own namespace, with Role/RoleBinding RBAC
  operator-rs init --domain example.com --namespaced

  # APIs from several groups (src/api/<group>/<version>/)
  operator-rs init --domain example.com --multigroup --project-name fleet

  # A manager whose replicas share the objects (3 replicas, --leader-elect --sharding)
  operator-rs init --domain example.com --sharding

  # See what would be written
  operator-rs init --domain example.com --dry-run")]
    Init(InitArgs),

    /// Add APIs (custom resource types), controllers and webhooks to the project.
    #[command(subcommand)]
    Create(CreateCommand),

    /// Change the project's configuration: layout, scope, sharding, license header.
    #[command(after_help = "Examples:
  # Move the project's kinds to the multigroup layout (src/api/<group>/<version>/ …)
  operator-rs edit --multigroup

  # Scope the manager to its own namespace (Role/RoleBinding, WATCH_NAMESPACE), or back
  operator-rs edit --namespaced
  operator-rs edit --namespaced=false

  # Spread the objects over 3 replicas of the manager, or back to one active replica
  operator-rs edit --sharding
  operator-rs edit --sharding=false

  # Change the license header of the Rust files operator-rs wrote
  operator-rs edit --license apache2 --owner \"Acme Corp\"

  # See what would change
  operator-rs edit --multigroup --dry-run")]
    Edit(EditArgs),

    /// Work on the project as a whole: scaffold it again from PROJECT, or upgrade it to this
    /// release's scaffold (kubebuilder's `alpha` commands).
    #[command(subcommand)]
    Alpha(AlphaCommand),

    /// Generate OLM packaging: the ClusterServiceVersion base (`generate kustomize manifests`)
    /// and bundles (`generate bundle`), as operator-sdk does.
    #[command(subcommand)]
    Generate(GenerateCommand),

    /// Work with OLM bundles: `bundle validate`.
    #[command(subcommand)]
    Bundle(BundleCommand),

    /// Print the version of operator-rs and of the stack it generates.
    #[command(after_help = "Example:\n  operator-rs version")]
    Version,

    /// Print a shell completion script.
    #[command(after_help = "Examples:
  operator-rs completion bash > /etc/bash_completion.d/operator-rs
  operator-rs completion zsh > \"${fpath[1]}/_operator-rs\"
  operator-rs completion fish > ~/.config/fish/completions/operator-rs.fish
  operator-rs completion powershell >> $PROFILE")]
    Completion {
        /// The shell to complete for.
        shell: CompletionShell,
    },
}

#[derive(Debug, Subcommand)]
pub enum CreateCommand {
    /// Add a custom resource type and/or a controller for a group/version/kind.
    #[command(after_help = "Examples:
  # A namespaced custom resource Memcached in cache.<domain>/v1alpha1, with a controller
  operator-rs create api --group cache --version v1alpha1 --kind Memcached

  # A cluster-scoped kind with an irregular plural, without a controller
  operator-rs create api --group crew --version v1 --kind Admiral --plural admirales \\
      --namespaced=false --controller=false

  # A second version of an existing kind (one CRD, one storage version)
  operator-rs create api --group crew --version v2 --kind FirstMate --controller=false

  # A controller for a built-in type
  operator-rs create api --group apps --version v1 --kind Deployment --resource=false --controller

  # Re-render the kind's own files (never duplicates code inserted at markers)
  operator-rs create api --group crew --version v1 --kind Captain --force

  # deploy-image: a Memcached kind whose controller runs memcached in a Deployment of spec.size pods
  operator-rs create api --group cache --version v1alpha1 --kind Memcached \\
      --image=memcached:1.6.26-alpine3.19 --image-container-command=\"memcached,--memory-limit=64,-o,modern,-v\" \\
      --image-container-port=11211 --run-as-user=1001 --plugins=deploy-image/v1-alpha")]
    Api(CreateApiArgs),

    /// Add defaulting, validating and/or conversion webhooks for a kind.
    #[command(after_help = "Examples:
  # A defaulting webhook for one of the project's kinds
  operator-rs create webhook --group crew --version v1 --kind Captain --defaulting

  # Then a validating webhook for the same kind (the defaulting one is kept as it is)
  operator-rs create webhook --group crew --version v1 --kind Captain --programmatic-validation

  # A conversion webhook: v1 is the hub (and the storage version), v2 a spoke
  operator-rs create webhook --group crew --version v1 --kind FirstMate --conversion --spoke v2

  # Webhooks for a built-in kind, at custom paths
  operator-rs create webhook --group apps --version v1 --kind Deployment --defaulting \\
      --programmatic-validation --defaulting-path=/mutate-deployments --validation-path=/validate-deployments")]
    Webhook(CreateWebhookArgs),
}

#[derive(Debug, Subcommand)]
pub enum AlphaCommand {
    /// Scaffold the project again from its PROJECT file, in a new folder (or in a folder where
    /// PROJECT is all that is left): `init`, every `create api`, every `create webhook`, then
    /// `make manifests`.
    #[command(after_help = "Examples:
  # The project in the current folder, scaffolded again in ../memcached-operator-fresh
  operator-rs alpha generate --output-dir ../memcached-operator-fresh

  # A project of which only PROJECT (and hack/boilerplate.rs.txt) is left, rebuilt in place
  operator-rs alpha generate

  # See the command lines it runs, with their output
  operator-rs --verbose alpha generate --output-dir /tmp/fresh")]
    Generate(AlphaGenerateArgs),

    /// Bring the project onto this operator-rs's scaffold: a three-way merge of the scaffold the
    /// project started from, your tree and the new scaffold; the runtime crate is replaced.
    #[command(after_help = "Examples:
  # A project made by operator-rs 0.1.0, with that release's binary at hand: one commit on
  # the branch operator-rs-update-from-0.1.0-to-<this release>
  git commit -am 'before the update'
  operator-rs alpha update --from-binary ~/.local/operator-rs-0.1.0/bin/operator-rs
  git show        # review; resolve any CONFLICT the command listed

  # Keep the history (ancestor, your project, upgrade, merge) instead of one commit
  operator-rs alpha update --from-version 0.1.0 --show-commits

  # What kubebuilder's auto-update workflow runs: commit conflicts with their markers, keep the
  # workflows as they are, push the branch and open an issue to review it
  operator-rs alpha update --force --push --restore-path .github/workflows --open-gh-issue

  # See what would change
  operator-rs alpha update --from-binary /tmp/operator-rs-0.1.0 --dry-run")]
    Update(AlphaUpdateArgs),

    /// Scaffold a Rust project from a kubebuilder Go project: the same domain, name, kinds,
    /// versions, scopes, controllers and webhooks, with each kind's spec and status fields from
    /// the Go project's CRDs; lists what it could not carry over.
    #[command(after_help = "Examples:
  # In a new, empty folder beside the Go project
  mkdir memcached-operator-rs && cd memcached-operator-rs
  operator-rs alpha migrate --from ../memcached-operator

  # Into a folder of its own, without building it (no `make manifests`)
  operator-rs alpha migrate --from ~/src/project-v4 --output-dir /tmp/project-v4-rs --make=false")]
    Migrate(AlphaMigrateArgs),
}

#[derive(Debug, Args)]
pub struct AlphaMigrateArgs {
    /// The folder of the kubebuilder Go project (its PROJECT, config/crd/bases, config/samples
    /// and hack/boilerplate.go.txt are read).
    #[arg(long, value_name = "DIR", allow_hyphen_values = true)]
    pub from: std::path::PathBuf,

    /// Where to write the Rust project: a new or empty folder [default: the current folder,
    /// which must be empty].
    #[arg(long, value_name = "DIR", allow_hyphen_values = true)]
    pub output_dir: Option<std::path::PathBuf>,

    /// Run `make manifests` on the new project (CRDs, RBAC and webhook manifests).
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL", action = clap::ArgAction::Set, default_value = "true")]
    pub make: bool,

    #[command(flatten)]
    pub common: CommonArgs,
}

#[derive(Debug, Args)]
pub struct AlphaGenerateArgs {
    /// The project to read PROJECT (and hack/boilerplate.rs.txt) from [default: the current folder].
    #[arg(long, value_name = "DIR", allow_hyphen_values = true)]
    pub input_dir: Option<std::path::PathBuf>,

    /// Where to write the project: a new or empty folder [default: the input folder, which must
    /// hold nothing but PROJECT and its license header].
    #[arg(long, value_name = "DIR", allow_hyphen_values = true)]
    pub output_dir: Option<std::path::PathBuf>,

    /// Run `make manifests` on the new tree (config/crd/bases, RBAC and webhook manifests).
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL", action = clap::ArgAction::Set, default_value = "true")]
    pub make: bool,

    /// Go only (kubebuilder checks the Go version): accepted and ignored.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL", action = clap::ArgAction::Set)]
    pub skip_go_version_check: Option<bool>,

    #[command(flatten)]
    pub common: CommonArgs,
}

#[derive(Debug, Args)]
pub struct AlphaUpdateArgs {
    /// The operator-rs binary of the release that made the project (PROJECT's cliVersion): it
    /// scaffolds the project as it started, the base of the merge.
    #[arg(long, value_name = "PATH", allow_hyphen_values = true)]
    pub from_binary: Option<std::path::PathBuf>,

    /// The release that made the project [default: cliVersion in PROJECT]; a leading v, as
    /// kubebuilder writes its releases, is taken off. Without --from-binary, `cargo install
    /// --locked operator-rs --version <VERSION>` builds it.
    #[arg(long, value_name = "VERSION", allow_hyphen_values = true)]
    pub from_version: Option<String>,

    /// The release to update to [default: this operator-rs]; another one is built with `cargo
    /// install --locked operator-rs --version <VERSION>`.
    #[arg(long, value_name = "VERSION", allow_hyphen_values = true)]
    pub to_version: Option<String>,

    /// The git branch that holds the project: the update is made from its last commit and the
    /// output branch starts from it [default: the branch checked out; kubebuilder's is main].
    #[arg(long, value_name = "BRANCH", allow_hyphen_values = true)]
    pub from_branch: Option<String>,

    /// Commit the merge even where it conflicts (the files keep conflict markers and are
    /// listed), or update with uncommitted changes in the work tree (which are left out).
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL", action = clap::ArgAction::Set, default_value = "false")]
    pub force: bool,

    /// The branch the update is committed on [default:
    /// operator-rs-update-from-<from>-to-<to>]; it must not exist.
    #[arg(long, value_name = "BRANCH", allow_hyphen_values = true)]
    pub output_branch: Option<String>,

    /// Keep the history on the output branch (the ancestor, your project, the upgrade and their
    /// merge) instead of one commit on the --from-branch, kubebuilder's default.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL", action = clap::ArgAction::Set, default_value = "false")]
    pub show_commits: bool,

    /// One commit on the --from-branch: the default (--squash=false is --show-commits).
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL", action = clap::ArgAction::Set)]
    pub squash: Option<bool>,

    /// A path (file or folder) kept as the --from-branch has it, the update's changes under it
    /// left out, e.g. .github/workflows (repeated for several; not with --show-commits).
    #[arg(long, value_name = "PATH", action = clap::ArgAction::Append, allow_hyphen_values = true)]
    pub restore_path: Vec<String>,

    /// The commit message of an update without conflicts [default: chore(operator-rs): update
    /// scaffold <from> -> <to>].
    #[arg(long, value_name = "MESSAGE", allow_hyphen_values = true)]
    pub merge_message: Option<String>,

    /// The commit message of an update with conflicts (--force) [default: chore(operator-rs):
    /// (:warning: manual conflict resolution required) update scaffold <from> -> <to>].
    #[arg(long, value_name = "MESSAGE", allow_hyphen_values = true)]
    pub conflict_message: Option<String>,

    /// `git push -u origin <output branch>` after the update.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL", action = clap::ArgAction::Set, default_value = "false")]
    pub push: bool,

    /// Open a GitHub issue with a link to compare the --from-branch and the output branch, and
    /// a checklist, after the update (needs GitHub's `gh` CLI, logged in).
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL", action = clap::ArgAction::Set, default_value = "false")]
    pub open_gh_issue: bool,

    /// A git setting for this run's git commands, key=value (repeated for several), on top of
    /// merge.renameLimit=999999, diff.renameLimit=999999 and merge.conflictStyle=merge;
    /// `disable` drops those three.
    #[arg(long, value_name = "KEY=VALUE", action = clap::ArgAction::Append, allow_hyphen_values = true)]
    pub git_config: Vec<String>,

    /// Merge into the files of the folder, with no git branches (works outside git too).
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL", action = clap::ArgAction::Set, default_value = "false")]
    pub in_place: bool,

    /// Run `make manifests` after a merge without conflicts.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL", action = clap::ArgAction::Set, default_value = "true")]
    pub make: bool,

    #[command(flatten)]
    pub common: CommonArgs,
}

#[derive(Debug, Subcommand)]
pub enum GenerateCommand {
    /// Kustomize bases for OLM.
    #[command(subcommand)]
    Kustomize(KustomizeCommand),

    /// Write an OLM bundle (bundle/, bundle.Dockerfile) from kustomize's rendering of
    /// config/manifests.
    #[command(after_help = "Examples:
  # What `make bundle` runs (after `operator-rs generate kustomize manifests --interactive=false`)
  kubectl kustomize config/manifests | operator-rs generate bundle --input - --version 0.0.1

  # operator-sdk's `make bundle` line
  kubectl kustomize config/manifests | operator-rs generate bundle -q --overwrite --version 0.0.1

  # The upgrade to 0.0.2, in two channels, replacing 0.0.1 and skipping anything older
  operator-rs generate bundle --version 0.0.2 --channels alpha,stable --default-channel stable \\
      --replaces memcached-operator.v0.0.1 --skip-range '<0.0.2'

  # From cluster-ready manifests on disk, into another folder
  operator-rs generate bundle --input-dir deploy --version 0.0.1 --output-dir out/bundle")]
    Bundle(GenerateBundleArgs),

    /// Add bundles to a file-based catalog (catalog/<package>/index.yaml: olm.package,
    /// olm.channel, olm.bundle), validate it offline, and write catalog.Dockerfile when missing.
    #[command(after_help = "Examples:
  # What `make catalog` runs after `make bundle`: add this version to the catalog
  operator-rs generate catalog --bundle ./bundle --image example.com/memcached-operator-bundle:v0.0.1

  # Several bundle directories at once, each with its image
  operator-rs generate catalog --bundle v1/bundle --image example.com/op-bundle:v0.0.1 \\
      --bundle v2/bundle --image example.com/op-bundle:v0.0.2")]
    Catalog(GenerateCatalogArgs),
}

#[derive(Debug, Args)]
pub struct GenerateCatalogArgs {
    /// A bundle directory to add (repeated for several) [default: ./bundle].
    #[arg(long = "bundle", value_name = "DIR")]
    pub bundles: Vec<std::path::PathBuf>,

    /// The image of each --bundle, in the same order: the bundle image OLM pulls (make
    /// bundle-build bundle-push).
    #[arg(long = "image", value_name = "IMAGE", allow_hyphen_values = true)]
    pub images: Vec<String>,

    /// The catalog folder.
    #[arg(long, default_value = "catalog", value_name = "DIR")]
    pub output: std::path::PathBuf,

    /// Print nothing but errors.
    #[arg(short, long)]
    pub quiet: bool,

    #[command(flatten)]
    pub common: CommonArgs,
}

#[derive(Debug, Subcommand)]
pub enum KustomizeCommand {
    /// Write config/manifests (the CSV base and its kustomization) and config/scorecard; a base
    /// that exists keeps what you wrote in it, and its owned CRDs follow config/crd/bases.
    #[command(after_help = "Examples:
  # Asks for the display name, description, provider and maintainers when run in a terminal
  operator-rs generate kustomize manifests

  # The same without questions
  operator-rs generate kustomize manifests --interactive=false --display-name \"Memcached Operator\" \\
      --provider Acme --maintainers \"Jane Doe <jane@example.com>\" --keywords cache,memcached")]
    Manifests(KustomizeManifestsArgs),
}

#[derive(Debug, Args)]
pub struct KustomizeManifestsArgs {
    /// Ask for the fields no flag gives [default: true when there is no base yet and stdin is a
    /// terminal].
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL", action = clap::ArgAction::Set)]
    pub interactive: Option<bool>,

    /// The operator's name in catalogs (spec.displayName).
    #[arg(long, allow_hyphen_values = true)]
    pub display_name: Option<String>,

    /// What the operator does (spec.description, Markdown).
    #[arg(long, allow_hyphen_values = true)]
    pub description: Option<String>,

    /// Who publishes the operator (spec.provider.name).
    #[arg(long, allow_hyphen_values = true)]
    pub provider: Option<String>,

    /// The provider's web site (spec.provider.url).
    #[arg(long, allow_hyphen_values = true)]
    pub provider_url: Option<String>,

    /// Maintainers as "Name <email>" (comma-separated or repeated).
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "MAINTAINER",
        allow_hyphen_values = true
    )]
    pub maintainers: Option<Vec<String>>,

    /// Catalog keywords (comma-separated or repeated).
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "KEYWORD",
        allow_hyphen_values = true
    )]
    pub keywords: Option<Vec<String>>,

    /// An image file (PNG, SVG, JPEG or GIF) to show as the operator's icon.
    #[arg(long, value_name = "FILE")]
    pub icon: Option<std::path::PathBuf>,

    /// OLM capability level: "Basic Install", "Seamless Upgrades", "Full Lifecycle",
    /// "Deep Insights" or "Auto Pilot".
    #[arg(long, allow_hyphen_values = true)]
    pub capabilities: Option<String>,

    /// The install modes the operator supports (OwnNamespace, SingleNamespace, MultiNamespace,
    /// AllNamespaces; comma-separated) [default: AllNamespaces; OwnNamespace for --namespaced
    /// projects without conversion webhooks].
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "MODE",
        allow_hyphen_values = true
    )]
    pub install_modes: Option<Vec<String>>,

    /// The package name: the base is bases/<package>.clusterserviceversion.yaml [default: the
    /// project name].
    #[arg(long, allow_hyphen_values = true)]
    pub package: Option<String>,

    /// The folder the existing base is read from [default: --output-dir].
    #[arg(long, value_name = "DIR", allow_hyphen_values = true)]
    pub input_dir: Option<std::path::PathBuf>,

    /// The folder the base and its kustomization are written to, inside the project.
    #[arg(
        long,
        value_name = "DIR",
        default_value = "config/manifests",
        allow_hyphen_values = true
    )]
    pub output_dir: std::path::PathBuf,

    /// The folder of the CRDs the owned kinds' descriptions are read from: operator-rs reads the
    /// API types' doc comments through the CRDs `make manifests` renders from them.
    #[arg(
        long,
        value_name = "DIR",
        default_value = "config/crd/bases",
        allow_hyphen_values = true
    )]
    pub apis_dir: std::path::PathBuf,

    /// Print nothing but errors.
    #[arg(short, long)]
    pub quiet: bool,

    #[command(flatten)]
    pub common: CommonArgs,
}

#[derive(Debug, Args)]
pub struct GenerateBundleArgs {
    /// The bundle's version (semver, e.g. 0.0.1): the CSV's spec.version and name [default: the
    /// base's].
    #[arg(short, long, allow_hyphen_values = true)]
    pub version: Option<String>,

    /// Write the bundle's manifests: the CSV, the CRDs and the other objects in
    /// <output-dir>/manifests/ [default: both parts, when neither --manifests nor --metadata is
    /// given].
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL", action = clap::ArgAction::Set)]
    pub manifests: Option<bool>,

    /// Write the bundle's metadata: <output-dir>/metadata/annotations.yaml and
    /// bundle.Dockerfile.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL", action = clap::ArgAction::Set)]
    pub metadata: Option<bool>,

    /// The bundle's folder, inside the project [default: bundle].
    #[arg(long, value_name = "DIR", allow_hyphen_values = true)]
    pub output_dir: Option<std::path::PathBuf>,

    /// Write the manifests to stdout (YAML documents) instead of <output-dir>/manifests.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL", action = clap::ArgAction::Set, default_value = "false")]
    pub stdout: bool,

    /// Write the metadata even if the bundle has some already (--overwrite=false keeps it).
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL", action = clap::ArgAction::Set, default_value = "true")]
    pub overwrite: bool,

    /// Channels the bundle is published in (comma-separated).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "alpha",
        allow_hyphen_values = true
    )]
    pub channels: Vec<String>,

    /// The package's default channel (one of --channels).
    #[arg(long, allow_hyphen_values = true)]
    pub default_channel: Option<String>,

    /// The package name [default: the project name].
    #[arg(long, allow_hyphen_values = true)]
    pub package: Option<String>,

    /// The CSV this bundle upgrades, <package>.v<X.Y.Z> [default: the base's spec.replaces].
    #[arg(long, allow_hyphen_values = true)]
    pub replaces: Option<String>,

    /// The olm.skipRange annotation: versions this bundle replaces directly, e.g. '<0.0.2'.
    #[arg(long, allow_hyphen_values = true)]
    pub skip_range: Option<String>,

    /// Service accounts besides the manager's whose Roles and ClusterRoles go into the CSV's
    /// permissions (OLM creates and binds them), comma-separated or repeated.
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "NAME",
        allow_hyphen_values = true
    )]
    pub extra_service_accounts: Vec<String>,

    /// Require every image of the CSV to be pinned by digest (name@sha256:…), as OLM's
    /// disconnected installs need. Offline, tags are not resolved: give IMG as name@sha256:…
    /// (docs/olm.md says how to find a digest).
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL", action = clap::ArgAction::Set, default_value = "false")]
    pub use_image_digests: bool,

    /// Kustomize's rendering of config/manifests: a file, or - for stdin [default: stdin when it
    /// is a pipe, else the output of `kubectl kustomize <kustomize-dir>`].
    #[arg(long, value_name = "FILE", allow_hyphen_values = true, conflicts_with_all = ["input_dir", "deploy_dir"])]
    pub input: Option<std::path::PathBuf>,

    /// A folder of cluster-ready manifests to make the bundle from (every YAML document of its
    /// files, recursively); the CSV base is the one in --kustomize-dir when they hold none.
    #[arg(long, value_name = "DIR", allow_hyphen_values = true, conflicts_with_all = ["deploy_dir", "crds_dir"])]
    pub input_dir: Option<std::path::PathBuf>,

    /// Like --input-dir (operator-sdk's older flag); with --crds-dir, the CRDs are that folder's.
    #[arg(long, value_name = "DIR", allow_hyphen_values = true)]
    pub deploy_dir: Option<std::path::PathBuf>,

    /// The folder of the CRDs, with --deploy-dir.
    #[arg(
        long,
        value_name = "DIR",
        allow_hyphen_values = true,
        requires = "deploy_dir"
    )]
    pub crds_dir: Option<std::path::PathBuf>,

    /// The folder of the CSV base (bases/<package>.clusterserviceversion.yaml) and its
    /// kustomization.
    #[arg(
        long,
        value_name = "DIR",
        default_value = "config/manifests",
        allow_hyphen_values = true
    )]
    pub kustomize_dir: std::path::PathBuf,

    /// Print nothing but errors.
    #[arg(short, long)]
    pub quiet: bool,

    #[command(flatten)]
    pub common: CommonArgs,
}

#[derive(Debug, Subcommand)]
pub enum BundleCommand {
    /// Check a bundle offline the way operator-framework's default validators do (operator-sdk
    /// bundle validate), and the optional suites selected; one line per problem, exit code 1 on
    /// errors (warnings pass).
    #[command(after_help = "Examples:
  operator-rs bundle validate ./bundle

  # operator-framework's recommended suites, then operator-rs's own checks
  operator-rs bundle validate ./bundle --select-optional suite=operatorframework
  operator-rs bundle validate ./bundle --select-optional name=operator-rs

  # Can OLM v1 install it?
  operator-rs bundle validate ./bundle --olmv1

  # The suites and their labels
  operator-rs bundle validate --list-optional")]
    Validate(BundleValidateArgs),
}

#[derive(Debug, Args)]
pub struct BundleValidateArgs {
    /// The bundle directory (with manifests/ and metadata/).
    #[arg(default_value = "./bundle")]
    pub dir: std::path::PathBuf,

    /// A label selector of optional suites to run as well, e.g. suite=operatorframework,
    /// name=community, name in (operator-rs,olmv1); see --list-optional.
    #[arg(long, value_name = "SELECTOR", allow_hyphen_values = true)]
    pub select_optional: Option<String>,

    /// List the optional suites and their labels, and run nothing.
    #[arg(long)]
    pub list_optional: bool,

    /// Values for the optional suites, key=value (comma-separated or repeated):
    /// k8s-version=1.30 (alpha-deprecated-apis, operatorhub), index-path=bundle.Dockerfile
    /// (community).
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "KEY=VALUE",
        allow_hyphen_values = true
    )]
    pub optional_values: Vec<String>,

    /// Also check whether OLM v1 can install the bundle (the olmv1 suite).
    #[arg(long)]
    pub olmv1: bool,

    /// Output format: text, or json-alpha1 (operator-sdk's JSON result).
    #[arg(short, long, default_value = "text", value_name = "FORMAT")]
    pub output: String,
}

#[derive(Debug, Args)]
pub struct CreateWebhookArgs {
    /// API group of the kind (built-in groups: core, apps, batch …).
    #[arg(long, allow_hyphen_values = true)]
    pub group: String,

    /// API version of the kind; with --conversion, the hub version.
    #[arg(long, allow_hyphen_values = true)]
    pub version: String,

    /// Kind, in PascalCase, like Memcached.
    #[arg(long, allow_hyphen_values = true)]
    pub kind: String,

    /// Resource name (plural); must match the API's if given.
    #[arg(long, allow_hyphen_values = true)]
    pub plural: Option<String>,

    /// Scaffold a defaulting (mutating) webhook.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL", action = clap::ArgAction::Set, default_value = "false")]
    pub defaulting: bool,

    /// Scaffold a validating webhook.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL", action = clap::ArgAction::Set, default_value = "false")]
    pub programmatic_validation: bool,

    /// Scaffold a conversion webhook, with --version as the hub (and storage) version.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL", action = clap::ArgAction::Set, default_value = "false")]
    pub conversion: bool,

    /// Spoke versions for --conversion (comma-separated or repeated): existing versions of the kind.
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "VERSION",
        allow_hyphen_values = true
    )]
    pub spoke: Vec<String>,

    /// Custom path of the defaulting webhook [default: /mutate-<group>-<version>-<kind>].
    #[arg(long, value_name = "PATH", allow_hyphen_values = true)]
    pub defaulting_path: Option<String>,

    /// Custom path of the validating webhook [default: /validate-<group>-<version>-<kind>].
    #[arg(long, value_name = "PATH", allow_hyphen_values = true)]
    pub validation_path: Option<String>,

    /// Overwrite the webhook files if they exist (code at scaffold markers is never duplicated).
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL", action = clap::ArgAction::Set, default_value = "false")]
    pub force: bool,

    /// Run `make manifests` afterwards to write config/webhook/manifests.yaml.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL", action = clap::ArgAction::Set, default_value = "true")]
    pub make: bool,

    /// Where the webhooks' serving certificate comes from: `self-signed` (the manager makes,
    /// renews and registers it itself; the cluster needs nothing else) or `cert-manager`
    /// (kubebuilder's layout). Chosen with the project's first webhook (default self-signed);
    /// `operator-rs edit --webhook-certs` switches a project's webhooks later.
    #[arg(long, value_enum, value_name = "MODE")]
    pub webhook_certs: Option<WebhookCerts>,

    /// Plugins (comma-separated): `go/v4` (this layout), and external plugins
    /// (`<name>/<version>`, kubebuilder's protocol; docs/plugins.md), run after the webhook's
    /// files are planned.
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "PLUGIN",
        allow_hyphen_values = true
    )]
    pub plugins: Vec<String>,

    #[command(flatten)]
    pub external: ExternalApiArgs,

    #[command(flatten)]
    pub common: CommonArgs,
}

#[derive(Debug, Args)]
pub struct CreateApiArgs {
    /// API group: the resource's group is <group>.<domain> (built-in groups: core, apps, batch …).
    #[arg(long, allow_hyphen_values = true)]
    pub group: String,

    /// API version, like v1, v1alpha1, v2beta1.
    #[arg(long, allow_hyphen_values = true)]
    pub version: String,

    /// Kind, in PascalCase, like Memcached.
    #[arg(long, allow_hyphen_values = true)]
    pub kind: String,

    /// Resource name (plural) if the default English plural is wrong.
    #[arg(long, allow_hyphen_values = true)]
    pub plural: Option<String>,

    /// Whether the resource is namespaced (false: cluster-scoped).
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL", action = clap::ArgAction::Set, default_value = "true")]
    pub namespaced: bool,

    /// Create the custom resource type [default: true; asks when run in a terminal].
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL", action = clap::ArgAction::Set)]
    pub resource: Option<bool>,

    /// Create a controller for the kind [default: true; asks when run in a terminal].
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL", action = clap::ArgAction::Set)]
    pub controller: Option<bool>,

    /// Overwrite the kind's own files if they exist (code at scaffold markers is never duplicated).
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL", action = clap::ArgAction::Set, default_value = "false")]
    pub force: bool,

    /// kubebuilder's server-side apply configurations: nothing to generate in Rust, where
    /// controllers already apply their objects server-side (accepted, with a note).
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL", action = clap::ArgAction::Set, default_value = "false")]
    pub ssa: bool,

    /// Run `make manifests` afterwards to write the CRD and RBAC manifests.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL", action = clap::ArgAction::Set, default_value = "true")]
    pub make: bool,

    /// kubebuilder's deploy-image `--manifests`: run `make manifests` afterwards (kubebuilder's
    /// --make runs `make generate`, which Rust does not need); false skips it, as --make=false.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL", action = clap::ArgAction::Set, default_value = "true")]
    pub manifests: bool,

    /// Name of the controller, to add another controller for a kind that has one (kubebuilder's
    /// --controller-name): a DNS-1123 label, its name in logs, metrics and Events.
    #[arg(long, allow_hyphen_values = true)]
    pub controller_name: Option<String>,

    #[command(flatten)]
    pub external: ExternalApiArgs,

    #[command(flatten)]
    pub common: CommonArgs,

    /// The plugins' flags (last: `--help` lists them under their own headings).
    #[command(flatten)]
    pub plugins: ApiPluginArgs,
}

/// A kind of another project (`--resource=false`): its CRD file, from which operator-rs
/// generates Rust types (`src/external/`).
#[derive(Debug, Args, Default, Clone)]
pub struct ExternalApiArgs {
    /// The kind's CustomResourceDefinition: a YAML file (one or several documents), relative to
    /// the project folder. kubebuilder takes a Go import path here; operator-rs needs the CRD.
    #[arg(long, allow_hyphen_values = true)]
    pub external_api_path: Option<String>,

    /// The domain of the kind's API group: the group is <group>.<domain> (cert-manager: --group
    /// cert-manager --external-api-domain io).
    #[arg(long, allow_hyphen_values = true)]
    pub external_api_domain: Option<String>,

    /// kubebuilder's Go module of the types (module@version): recorded in PROJECT, nothing to
    /// fetch for Rust.
    #[arg(long, allow_hyphen_values = true)]
    pub external_api_module: Option<String>,
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// Domain for groups: APIs are <group>.<domain>.
    #[arg(long, default_value = "my.domain", allow_hyphen_values = true)]
    pub domain: String,

    /// Project name, a DNS-1123 label [default: the folder's name, lower-cased].
    #[arg(long, allow_hyphen_values = true)]
    pub project_name: Option<String>,

    /// Copyright owner written into the license header.
    #[arg(long, default_value = "", allow_hyphen_values = true)]
    pub owner: String,

    /// License header of generated Rust files.
    #[arg(long, value_enum, default_value_t = License::Apache2)]
    pub license: License,

    /// File whose text is the license header of generated Rust files (a `/* ... */` block or
    /// `//` lines, as kubebuilder's --license-file); replaces --license.
    #[arg(long, value_name = "FILE", allow_hyphen_values = true)]
    pub license_file: Option<std::path::PathBuf>,

    /// Scope the manager to its own namespace (Role/RoleBinding, WATCH_NAMESPACE).
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL", action = clap::ArgAction::Set, default_value = "false")]
    pub namespaced: bool,

    /// Lay APIs out by group (src/api/<group>/<version>/), for projects with several groups.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL", action = clap::ArgAction::Set, default_value = "false")]
    pub multigroup: bool,

    /// Spread each controller's objects over the manager's replicas (the manager's --sharding,
    /// 3 replicas, a PodDisruptionBudget; docs/sharding.md).
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL", action = clap::ArgAction::Set, default_value = "false")]
    pub sharding: bool,

    /// Where the project takes operator-rs's crates (the runtime and its test harnesses) from:
    /// `vendored`, copies in the project that operator-rs replaces, or `crates-io`, dependencies
    /// by version (until the crates are published, a project of that mode builds with a
    /// [patch.crates-io] to an operator-rs checkout).
    #[arg(long, value_enum, value_name = "SOURCE", default_value_t = crate::runtime_source::DEFAULT)]
    pub runtime: crate::project::RuntimeSource,

    #[command(flatten)]
    pub kubebuilder: KubebuilderInitArgs,

    #[command(flatten)]
    pub common: CommonArgs,
}

/// kubebuilder's `init` flags that mean little in Rust: accepted, so that kubebuilder command lines
/// run as written, each with a one-line note on what it does here.
#[derive(Debug, Default, Args)]
#[command(next_help_heading = "kubebuilder compatibility")]
pub struct KubebuilderInitArgs {
    /// Plugins (comma-separated): `go/v4` (and go.kubebuilder.io/v4, base.go…/v4, kustomize/v2)
    /// name kubebuilder's standard layout, which is this tool's layout.
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "PLUGIN",
        allow_hyphen_values = true
    )]
    pub plugins: Vec<String>,

    /// The Go module path: recorded in PROJECT as `repo`, and the seed of the leader election ID
    /// (as in kubebuilder); Rust projects have no module path.
    #[arg(long, value_name = "REPO", allow_hyphen_values = true)]
    pub repo: Option<String>,

    /// PROJECT file version: only "3" (the one kubebuilder writes).
    #[arg(long, value_name = "VERSION", allow_hyphen_values = true)]
    pub project_version: Option<String>,

    /// Go only (`go get`): accepted and ignored.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL", action = clap::ArgAction::Set)]
    pub fetch_deps: Option<bool>,

    /// Go only: accepted and ignored.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL", action = clap::ArgAction::Set)]
    pub skip_go_version_check: Option<bool>,
}

#[derive(Debug, Args)]
pub struct EditArgs {
    /// Move the project to the multigroup layout (src/api/<group>/<version>/, controllers and
    /// webhooks by group); false keeps the layout of a project without kinds of its own.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL", action = clap::ArgAction::Set)]
    pub multigroup: Option<bool>,

    /// Scope the manager to its own namespace (Role/RoleBinding, WATCH_NAMESPACE); false: the
    /// whole cluster (ClusterRole/ClusterRoleBinding).
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL", action = clap::ArgAction::Set)]
    pub namespaced: Option<bool>,

    /// Spread each controller's objects over the manager's replicas (the manager's --sharding,
    /// 3 replicas, a PodDisruptionBudget); false: one active replica, as init writes it.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL", action = clap::ArgAction::Set)]
    pub sharding: Option<bool>,

    /// New license header of the Rust files operator-rs wrote (with --owner, or the owner of the
    /// current header).
    #[arg(long, value_enum)]
    pub license: Option<License>,

    /// File whose text becomes the license header (a `/* ... */` block or `//` lines).
    #[arg(
        long,
        value_name = "FILE",
        allow_hyphen_values = true,
        conflicts_with = "license"
    )]
    pub license_file: Option<std::path::PathBuf>,

    /// Copyright owner of the license header (rewrites the header, as --license does).
    #[arg(long, allow_hyphen_values = true)]
    pub owner: Option<String>,

    /// Plugins to add (comma-separated). `go/v4` (this layout) and `deploy-image/v1-alpha` (used
    /// by `create api --image`) need nothing here.
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "PLUGIN",
        allow_hyphen_values = true
    )]
    pub plugins: Vec<String>,

    /// Where the webhooks' serving certificate comes from: `self-signed` (the manager's own) or
    /// `cert-manager`. Rewrites config/ for every webhook of the project (or, without webhooks
    /// yet, records the choice for the first one).
    #[arg(long, value_enum, value_name = "MODE")]
    pub webhook_certs: Option<WebhookCerts>,

    /// Where the project takes operator-rs's crates from: `vendored` writes copies into the
    /// project, `crates-io` removes them and names the crates by version. Rewrites the crates'
    /// entries of Cargo.toml's [workspace] and [workspace.dependencies] only.
    #[arg(long, value_enum, value_name = "SOURCE")]
    pub runtime: Option<crate::project::RuntimeSource>,

    /// Overwrite config/ files that cannot be edited in place (kubebuilder's --force rewrites
    /// config/manager/manager.yaml); with --plugins helm/v2-alpha, write the chart's files that
    /// are yours again, but Chart.yaml (kubebuilder's helm plugin's --force).
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL", action = clap::ArgAction::Set, default_value = "false")]
    pub force: bool,

    #[command(flatten)]
    pub common: CommonArgs,

    /// The flags of the plugins of the whole project, last: each under its own heading.
    #[command(flatten)]
    pub plugin_flags: crate::plugins::ProjectPluginArgs,
}

/// Flags every scaffolding command takes.
#[derive(Debug, Args)]
pub struct CommonArgs {
    /// Print the files that would be written, and write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompletionShell {
    Bash,
    Zsh,
    Fish,
    Powershell,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_cli_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn every_command_has_examples() {
        let cmd = Cli::command();
        let mut all: Vec<&clap::Command> = cmd.get_subcommands().collect();
        while let Some(sub) = all.pop() {
            if sub.has_subcommands() {
                all.extend(sub.get_subcommands());
                continue;
            }
            let help = sub
                .get_after_help()
                .map(|h| h.to_string())
                .unwrap_or_default();
            assert!(
                help.contains("Example"),
                "{} has no examples",
                sub.get_name()
            );
        }
    }

    #[test]
    fn go_style_bools() {
        for (args, want) in [
            (vec![], false),
            (vec!["--namespaced"], true),
            (vec!["--namespaced=false"], false),
            (vec!["--namespaced=true"], true),
        ] {
            let mut argv = vec!["operator-rs", "init"];
            argv.extend(args);
            let Command::Init(init) = Cli::try_parse_from(argv).unwrap().command else {
                panic!()
            };
            assert_eq!(init.namespaced, want);
        }
    }

    #[test]
    fn verbose_goes_before_or_after_the_command() {
        for argv in [
            ["operator-rs", "--verbose", "create", "webhook"],
            ["operator-rs", "create", "webhook", "--verbose"],
        ] {
            let mut argv = argv.to_vec();
            argv.extend(["--group", "g", "--version", "v1", "--kind", "K"]);
            assert!(Cli::try_parse_from(argv).unwrap().verbose);
        }
        let argv = ["operator-rs", "create", "webhook", "--group", "g"];
        let argv = [&argv[..], &["--version", "v1", "--kind", "K"]].concat();
        assert!(!Cli::try_parse_from(argv).unwrap().verbose);
    }
}
