//! The URLs of runs `vantage serve` lists, as the web app reads them (docs/SERVE.md): a run's
//! id, by which the server's `/api/…/<id>` routes name it.

/// The id of a run `vantage serve` lists, from the URL the page opens it by (`runs/<id>`, a log,
/// or `runs/<id>/` or `runs/<id>/manifest.json`, a dataset's root), as its `/api/…/<id>` routes
/// name it; `None` for any other URL.
pub fn served_run_id(url: &str) -> Option<&str> {
    let id = url.trim_start_matches('/').strip_prefix("runs/")?;
    Some(id.trim_end_matches("manifest.json").trim_end_matches('/')).filter(|id| !id.is_empty())
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_served_runs_id_is_read_from_its_url() {
        use super::served_run_id;
        assert_eq!(served_run_id("runs/sd/run.jsonl"), Some("sd/run.jsonl"));
        assert_eq!(served_run_id("runs/sd/run.jsonl/"), Some("sd/run.jsonl"));
        assert_eq!(served_run_id("/runs/sd/run.jsonl/manifest.json"), Some("sd/run.jsonl"));
        assert_eq!(served_run_id("runs/"), None);
        assert_eq!(served_run_id("https://host/run/"), None);
    }
}
