import ExcelJS from 'exceljs';
import { ValidationError } from '../../errors.ts';

/**
 * Every worksheet in workbook order: the sheet name as a heading line, then one line per non-empty row with the
 * cells' displayed values separated by tabs (empty cells keep their column). Formulas give their last result.
 */
export async function extractXlsx(bytes: Uint8Array): Promise<string> {
  const workbook = new ExcelJS.Workbook();
  try {
    await workbook.xlsx.load(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer, {
      ignoreNodes: ['dataValidations', 'conditionalFormatting', 'extLst'],
    });
  } catch {
    throw new ValidationError('The XLSX could not be read: the file is corrupted or not a valid Excel workbook.');
  }
  const blocks: string[] = [];
  for (const sheet of workbook.worksheets) {
    const lines = [`# ${sheet.name}`];
    sheet.eachRow({ includeEmpty: false }, (row) => {
      const cells: string[] = [];
      row.eachCell({ includeEmpty: true }, (cell, column) => {
        cells[column - 1] = cellText(cell);
      });
      const line = Array.from(cells, (value) => value ?? '')
        .join('\t')
        .replace(/\t+$/, '');
      if (line.trim()) lines.push(line);
    });
    blocks.push(lines.join('\n'));
  }
  return blocks.join('\n\n');
}

function cellText(cell: ExcelJS.Cell): string {
  const value = cell.value;
  if (value instanceof Date)
    return value
      .toISOString()
      .replace(/T00:00:00\.000Z$/, '')
      .replace(/\.000Z$/, 'Z');
  let text: string;
  try {
    text = cell.text;
  } catch {
    text = value === null || value === undefined ? '' : String(value);
  }
  // A cell's own line breaks and tabs would break the one-row-per-line, tab-separated shape.
  return text.replace(/[\t\r\n]+/g, ' ').trim();
}
