//! What `create api` is asked to do: the flags, checked on their own, the questions kubebuilder
//! asks for the ones not given, and the plugins that take part.

use std::fmt;
use std::io::IsTerminal as _;

use anyhow::Result;

use crate::cli::CreateApiArgs;
use crate::external::ExternalRequest;
use crate::names::{InvalidInput, parse_controller_name};
use crate::plugins::external::Found;
use crate::plugins::{self, ApiFlags, ApiPart};

/// `create api` after flag parsing and prompting.
pub struct Request {
    pub group: String,
    pub version: String,
    pub kind: String,
    pub plural: Option<String>,
    pub namespaced: bool,
    pub resource: bool,
    pub controller: bool,
    pub force: bool,
    /// `--controller-name`: another controller for a kind that has one.
    pub controller_name: Option<String>,
    /// `--external-api-*`: a kind of another project.
    pub external: Option<ExternalRequest>,
    /// The plugins' parts in this run, in the order of [`plugins::ALL`].
    pub parts: Vec<Box<dyn ApiPart>>,
    /// The `--plugins` keys that name the base layout (`go/v4` …), for a note.
    pub layout_keys: Vec<String>,
    /// The external plugins `--plugins` names, run after the command's own files.
    pub external_plugins: Vec<Found>,
}

impl fmt::Debug for Request {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<&str> = self.parts.iter().map(|p| p.key()).collect();
        f.debug_struct("Request")
            .field("group", &self.group)
            .field("version", &self.version)
            .field("kind", &self.kind)
            .field("plural", &self.plural)
            .field("namespaced", &self.namespaced)
            .field("resource", &self.resource)
            .field("controller", &self.controller)
            .field("force", &self.force)
            .field("controller_name", &self.controller_name)
            .field("external", &self.external)
            .field("parts", &parts)
            .finish()
    }
}

impl Request {
    /// `--resource` and `--controller` default to true; like kubebuilder, operator-rs asks when
    /// they are not given and a person is at the terminal (unless a plugin decides them).
    pub fn from_args(args: &CreateApiArgs) -> Result<Self> {
        let external = ExternalRequest::from_flags(
            args.external.external_api_path.as_deref(),
            args.external.external_api_domain.as_deref(),
            args.external.external_api_module.as_deref(),
            args.resource,
        )?;
        let controller_name = match &args.controller_name {
            Some(name) if args.controller == Some(false) => {
                return Err(InvalidInput::new(
                    "--controller-name",
                    name,
                    "names a controller to create, not with --controller=false",
                )
                .into());
            }
            Some(name) => Some(parse_controller_name(name)?),
            None => None,
        };
        let selection = plugins::select(&args.plugins.plugins, "create api")?;
        let mut parts = Vec::new();
        for plugin in plugins::ALL {
            if let Some(part) = plugin.create_api(&args.plugins, selection.has(*plugin))? {
                parts.push(part);
            }
        }
        let mut flags = ApiFlags {
            resource: args.resource,
            controller: args.controller,
            namespaced: args.namespaced,
            external: external.is_some(),
        };
        for part in &parts {
            part.constrain(&mut flags)?;
        }
        let ask = |question: &str, given: Option<bool>| -> Result<bool> {
            match given {
                Some(value) => Ok(value),
                None if std::io::stdin().is_terminal() => prompt_yes_no(question),
                None => Ok(true),
            }
        };
        Ok(Self {
            group: args.group.clone(),
            version: args.version.clone(),
            kind: args.kind.clone(),
            plural: args.plural.clone(),
            namespaced: flags.namespaced,
            // An external kind is never the project's resource: no need to ask.
            resource: match external {
                Some(_) => false,
                None => ask("Create Resource [y/n]", flags.resource)?,
            },
            controller: ask("Create Controller [y/n]", flags.controller)?,
            force: args.force,
            controller_name,
            external,
            parts,
            layout_keys: selection.layout,
            external_plugins: selection.external,
        })
    }

    /// A plain request (no plugins, no external kind) for `group`/`version`/`kind`, as tests and
    /// callers that build requests themselves start from.
    pub fn new(group: &str, version: &str, kind: &str) -> Self {
        Self {
            group: group.to_string(),
            version: version.to_string(),
            kind: kind.to_string(),
            plural: None,
            namespaced: true,
            resource: true,
            controller: true,
            force: false,
            controller_name: None,
            external: None,
            parts: Vec::new(),
            layout_keys: Vec::new(),
            external_plugins: Vec::new(),
        }
    }
}

fn prompt_yes_no(question: &str) -> Result<bool> {
    use std::io::Write as _;
    loop {
        println!("{question}");
        std::io::stdout().flush()?;
        let mut answer = String::new();
        if std::io::stdin().read_line(&mut answer)? == 0 {
            return Ok(true);
        }
        match answer.trim().to_lowercase().as_str() {
            "y" | "yes" => return Ok(true),
            "n" | "no" => return Ok(false),
            _ => println!("Please answer y or n."),
        }
    }
}
