-- Drive `migrate server` from Neovim's own LSP client (0.7 or later), headless: open the file,
-- wait for the diagnostics, take the first code action, apply its edit, save, report.
-- Inputs by environment: MIGRATE_FILE, MIGRATE_ROOT, MIGRATE_PYTHON, MIGRATE_OUT.
local out = {}
local function finish(status)
  table.insert(out, "status:" .. status)
  local handle = io.open(os.getenv("MIGRATE_OUT"), "w")
  handle:write(table.concat(out, "\n") .. "\n")
  handle:close()
  vim.cmd("qa!")
end

vim.cmd("edit " .. vim.fn.fnameescape(os.getenv("MIGRATE_FILE")))
local bufnr = vim.api.nvim_get_current_buf()
local client_id = vim.lsp.start_client({
  name = "migrate",
  cmd = { os.getenv("MIGRATE_PYTHON"), "-m", "migrator", "server" },
  root_dir = os.getenv("MIGRATE_ROOT"),
})
vim.lsp.buf_attach_client(bufnr, client_id)
if not vim.wait(60000, function() return #vim.diagnostic.get(bufnr) > 0 end, 50) then
  return finish("no diagnostics")
end
for _, diagnostic in ipairs(vim.diagnostic.get(bufnr)) do
  table.insert(out, string.format("diagnostic:%s:%d:%d", diagnostic.code, diagnostic.lnum, diagnostic.col))
end
local params = {
  textDocument = vim.lsp.util.make_text_document_params(bufnr),
  range = { start = { line = 0, character = 0 }, ["end"] = { line = vim.api.nvim_buf_line_count(bufnr), character = 0 } },
  context = { diagnostics = {} },
}
local responses = vim.lsp.buf_request_sync(bufnr, "textDocument/codeAction", params, 60000)
local actions = responses and responses[client_id] and responses[client_id].result or {}
if #actions == 0 then
  return finish("no code action")
end
table.insert(out, "action:" .. actions[1].title)
vim.lsp.util.apply_workspace_edit(actions[1].edit, "utf-16")
vim.cmd("write")
vim.lsp.stop_client(client_id)
finish("ok")
