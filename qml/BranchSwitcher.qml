// ‹ 2/3 ›: moves between the siblings of a message (edits of a user message, regenerations
// of a reply). Ctrl+Up/Down or Alt+Left/Right do the same for the last fork.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Arbor

RowLayout {
    id: root
    objectName: "branchSwitcher"
    property int row: -1
    property int siblingIndex: 0
    property int siblingCount: 1
    spacing: 0

    ToolButton {
        objectName: "branchPrev"
        text: "‹"
        enabled: root.siblingIndex > 0 && !ChatController.generating
        Accessible.name: qsTr("Previous branch")
        onClicked: ChatController.switchSibling(root.row, -1)
    }
    Label {
        objectName: "branchLabel"
        text: (root.siblingIndex + 1) + "/" + root.siblingCount
        Accessible.name: qsTr("Branch %1 of %2").arg(root.siblingIndex + 1).arg(root.siblingCount)
    }
    ToolButton {
        objectName: "branchNext"
        text: "›"
        enabled: root.siblingIndex + 1 < root.siblingCount && !ChatController.generating
        Accessible.name: qsTr("Next branch")
        onClicked: ChatController.switchSibling(root.row, 1)
    }
}
